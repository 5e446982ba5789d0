{* License Bridge: the licence on the client's product details page (Smarty, rendered by WHMCS).
   Every value is escaped here: WHMCS does not escape template output by default.
   Vars: lb_* from licensebridge_ClientArea; token is WHMCS's CSRF token of the page. *}
<div class="license-bridge">
{if $lb_unavailable}
  <div class="alert alert-warning">The licence details are not available right now. Please try again in a few minutes.</div>
{elseif !$lb_known}
  <div class="alert alert-info">Your licence is being set up. Its details appear here once it is ready.</div>
{else}
  <table class="table table-sm">
    <tr><th>Licence status</th><td>{$lb_status|escape:'html'}</td></tr>
    <tr><th>Licence</th><td>{$lb_licence|escape:'html'}</td></tr>
    <tr><th>Licensed IP address</th><td>{$lb_ip|escape:'html'}</td></tr>
    {if $lb_expires_at}<tr><th>Current term ends</th><td>{$lb_expires_at|escape:'html'}</td></tr>{/if}
    <tr><th>IP changes left</th><td>{if $lb_ip_changes_left === null}unlimited{else}{$lb_ip_changes_left|escape:'html'}{/if}</td></tr>
  </table>

  {if $lb_install_command}
  <h4>Install command</h4>
  <p>Run this as root on the server at {$lb_ip|escape:'html'}:</p>
  <pre id="lb-install-command" style="white-space:pre-wrap">{$lb_install_command|escape:'html'}</pre>
  <button type="button" class="btn btn-default btn-sm" id="lb-copy"
    onclick="navigator.clipboard.writeText(document.getElementById('lb-install-command').textContent)">Copy</button>
  {/if}

  {if $lb_can_change_ip}
  <h4>Move the licence to another IP</h4>
  <form method="post" action="clientarea.php?action=productdetails&amp;id={$lb_serviceid|escape:'url'}">
    <input type="hidden" name="token" value="{$token|escape:'html'}">
    <input type="hidden" name="id" value="{$lb_serviceid|escape:'html'}">
    <input type="hidden" name="modop" value="custom">
    <input type="hidden" name="a" value="ClientChangeIp">
    <label for="lb-new-ip">New IP address</label>
    <input type="text" class="form-control" id="lb-new-ip" name="lb_new_ip" maxlength="45" required placeholder="203.0.113.10">
    {if $lb_ip_changes_left !== null}<p class="small">This licence can be moved {$lb_ip_changes_left|escape:'html'} more time(s).</p>{/if}
    <button type="submit" class="btn btn-primary btn-sm">Change IP</button>
  </form>
  {elseif $lb_is_addon}
  <p class="small">To move this licence to another IP address, please contact our staff.</p>
  {elseif $lb_status == 'active'}
  <p class="small">This licence's IP address can no longer be changed here. Please contact our staff.</p>
  {/if}
{/if}
</div>
