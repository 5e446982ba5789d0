/**
 * The console's one stylesheet, served at /console/assets/console.css (the CSP allows no inline
 * style). Kept here rather than as a .css file so the compiled dist/ and the bundled CLI carry it
 * with no copy step. Laptop and phone: one column under 700px.
 */
export const CONSOLE_CSS = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #f6f7f9; --card: #fff; --accent: #1f5fbf; --bad: #b42318; --warn: #a15c00; --ok: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus, textarea:focus { outline: 3px solid #f3b73c; outline-offset: 1px; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.25rem; padding: .6rem 1rem; background: #14213d; color: #fff; }
header.top a { color: #fff; text-decoration: none; padding: .2rem .1rem; }
header.top a[aria-current="page"] { border-bottom: 2px solid #f3b73c; }
header.top .brand { font-weight: 700; margin-right: .5rem; }
header.top form { margin-left: auto; display: flex; gap: .5rem; align-items: center; }
header.top .who { opacity: .85; font-size: .9em; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.2rem 0 .5rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(230px, 1fr)); gap: .75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; }
.card h2 { margin-top: 0; }
.big { font-size: 1.6rem; font-weight: 600; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); }
th, td { text-align: left; padding: .4rem .55rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef0f4; font-weight: 600; }
td.num, th.num { text-align: right; }
.muted { color: var(--muted); }
.bad { color: var(--bad); }
.warn { color: var(--warn); }
.ok { color: var(--ok); }
.status { display: inline-block; padding: 0 .45rem; border-radius: 999px; font-size: .85em; border: 1px solid var(--line); background: #eef0f4; }
.status-active, .status-succeeded { background: #dcf5e3; border-color: #a6dcb6; }
.status-suspended, .status-blocked, .status-queued, .status-running { background: #fff3d6; border-color: #f0d28a; }
.status-failed, .status-terminated { background: #fde2df; border-color: #f2aaa3; }
form.inline { display: inline; }
form.search { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: 1rem; }
form.search label, form.stack label { display: flex; flex-direction: column; font-size: .9em; gap: .2rem; }
form.stack { display: flex; flex-direction: column; gap: .75rem; max-width: 520px; }
input, select, textarea { font: inherit; padding: .4rem .5rem; border: 1px solid #aab1bf; border-radius: 4px; background: #fff; }
textarea { min-height: 10rem; width: 100%; font-family: ui-monospace, monospace; font-size: .9em; }
button, .button { font: inherit; padding: .4rem .85rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: .5rem 0 1rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; background: var(--card); border: 1px solid var(--line); padding: .75rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #eef0f4; padding: .5rem; border-radius: 4px; margin: 0; }
ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--line); }
ol.timeline li { padding: .25rem 0 .5rem .9rem; position: relative; }
ol.timeline li::before { content: ""; position: absolute; left: -7px; top: .6rem; width: 11px; height: 11px; border-radius: 50%; background: var(--accent); }
.notice { padding: .6rem .9rem; border-radius: 4px; border: 1px solid var(--line); background: var(--card); margin-bottom: 1rem; }
.notice.bad { border-color: #f2aaa3; background: #fde2df; }
.notice.ok { border-color: #a6dcb6; background: #dcf5e3; }
.pager { display: flex; gap: 1rem; margin: .75rem 0; }
.chart { width: 100%; height: auto; background: var(--card); border: 1px solid var(--line); }
.chart .orders { fill: #1f5fbf; } .chart .renewals { fill: #1a7f37; } .chart .failures { fill: #b42318; }
.chart text { font-size: 10px; fill: var(--muted); }
.legend { display: flex; gap: 1rem; font-size: .9em; }
.legend span::before { content: ""; display: inline-block; width: .8em; height: .8em; margin-right: .3em; vertical-align: -1px; }
.legend .orders::before { background: #1f5fbf; } .legend .renewals::before { background: #1a7f37; } .legend .failures::before { background: #b42318; }
.login { max-width: 380px; margin: 12vh auto; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 1.25rem 1.5rem; }
.table-wrap { overflow-x: auto; }
@media (max-width: 700px) {
  header.top form { margin-left: 0; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dt { margin-top: .4rem; }
  main { padding: .6rem; }
}
`;
