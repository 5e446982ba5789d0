{* license-bridge "License & IP" client function. Variables: see widget.lblicence.php. *}
<div class="license-bridge">
    {if $lb_error}<div class="alert alert-danger">{$lb_error|escape}</div>{/if}
    {if $lb_info}<div class="alert alert-success">{$lb_info|escape}</div>{/if}
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
        {if $can_change_ip}
            <h3>Move the licence to another IP</h3>
            <form action="" method="post">
                <input type="hidden" name="lb_action" value="changeip" />
                <input type="text" name="new_ip" value="{$lb_new_ip|escape}" placeholder="203.0.113.10" maxlength="64" required />
                <input type="submit" value="Change IP" class="btn btn-primary" />
                {securitytoken}
            </form>
        {/if}
    {/if}
</div>
