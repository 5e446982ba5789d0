{* license-bridge: the licence on the customer's service page. Variables: see class.license_bridge_controller.php. *}
<div class="license-bridge">
    {if $lb_error}<div class="alert alert-warning">{$lb_error|escape}</div>{/if}
    {if $licence}
        <table class="table">
            <tr><th>License key</th><td>{$licence.license_key|escape}</td></tr>
            <tr><th>Status</th><td>{$licence.status|escape}</td></tr>
            <tr><th>Product</th><td>{$licence.product|escape}</td></tr>
            <tr><th>Licensed IP</th><td>{$licence.ip|escape}</td></tr>
            <tr><th>Expires</th><td>{$licence.expires|escape}</td></tr>
            <tr><th>IP changes left</th><td>{$licence.ip_changes_left_text|escape}</td></tr>
        </table>
        {if $licence.install_command}
            <p>Run this as root on the licensed server to install the licence:</p>
            <pre>{$licence.install_command|escape}</pre>
        {/if}
        {if $can_change_ip}<p>To move the licence to another server, use <b>License &amp; IP</b> in this service's menu.</p>{/if}
    {/if}
</div>
