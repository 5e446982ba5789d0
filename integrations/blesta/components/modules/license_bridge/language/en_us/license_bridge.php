<?php
// Basics
$lang['LicenseBridge.name'] = 'License Bridge';
$lang['LicenseBridge.description'] = 'Sells software licences (cPanel, LiteSpeed, CloudLinux, Imunify360, ...) through a license-bridge service: each service action is one call of the bridge\'s provisioning API.';
$lang['LicenseBridge.module_row'] = 'Bridge';
$lang['LicenseBridge.module_row_plural'] = 'Bridges';
$lang['LicenseBridge.module_group'] = 'Bridge Group';

// Group order options
$lang['LicenseBridge.order_options.first'] = 'First bridge';
$lang['LicenseBridge.order_options.roundrobin'] = 'Round robin';

// Module management
$lang['LicenseBridge.add_module_row'] = 'Add Bridge';
$lang['LicenseBridge.add_module_group'] = 'Add Bridge Group';
$lang['LicenseBridge.manage.module_rows_title'] = 'Bridges';
$lang['LicenseBridge.manage.module_groups_title'] = 'Bridge Groups';
$lang['LicenseBridge.manage.module_rows_heading.name'] = 'Name';
$lang['LicenseBridge.manage.module_rows_heading.url'] = 'Bridge URL';
$lang['LicenseBridge.manage.module_rows_heading.options'] = 'Options';
$lang['LicenseBridge.manage.module_groups_heading.name'] = 'Group Name';
$lang['LicenseBridge.manage.module_groups_heading.module_rows'] = 'Bridges';
$lang['LicenseBridge.manage.module_groups_heading.options'] = 'Options';
$lang['LicenseBridge.manage.module_rows.edit'] = 'Edit';
$lang['LicenseBridge.manage.module_rows.delete'] = 'Delete';
$lang['LicenseBridge.manage.module_rows.confirm_delete'] = 'Are you sure you want to delete this bridge?';
$lang['LicenseBridge.manage.module_groups.edit'] = 'Edit';
$lang['LicenseBridge.manage.module_groups.delete'] = 'Delete';
$lang['LicenseBridge.manage.module_groups.confirm_delete'] = 'Are you sure you want to delete this bridge group?';
$lang['LicenseBridge.manage.module_rows_no_results'] = 'There are no bridges.';
$lang['LicenseBridge.manage.module_groups_no_results'] = 'There are no bridge groups.';

// Add/edit row
$lang['LicenseBridge.add_row.box_title'] = 'Add License Bridge';
$lang['LicenseBridge.add_row.basic_title'] = 'Bridge';
$lang['LicenseBridge.add_row.add_btn'] = 'Add Bridge';
$lang['LicenseBridge.edit_row.box_title'] = 'Edit License Bridge';
$lang['LicenseBridge.edit_row.basic_title'] = 'Bridge';
$lang['LicenseBridge.edit_row.add_btn'] = 'Update Bridge';
$lang['LicenseBridge.row_meta.name'] = 'Name';
$lang['LicenseBridge.row_meta.scheme'] = 'Scheme';
$lang['LicenseBridge.row_meta.scheme_https'] = 'https';
$lang['LicenseBridge.row_meta.scheme_http'] = 'http (only on a private network)';
$lang['LicenseBridge.row_meta.host'] = 'Host';
$lang['LicenseBridge.row_meta.port'] = 'Port';
$lang['LicenseBridge.row_meta.token'] = 'Provisioning Token';
$lang['LicenseBridge.row_meta.tooltip.name'] = 'A name for this bridge, shown in Blesta only.';
$lang['LicenseBridge.row_meta.tooltip.host'] = 'The bridge\'s host name or IP address only, e.g. licenses.example.com (no https://, no path).';
$lang['LicenseBridge.row_meta.tooltip.port'] = 'Leave blank for the scheme\'s default port (443 for https).';
$lang['LicenseBridge.row_meta.tooltip.token'] = 'The bridge\'s PROVISIONING_TOKEN. It is stored encrypted and never shown again.';
$lang['LicenseBridge.row_meta.tooltip.token_edit'] = 'Leave blank to keep the stored token. The stored token is never shown.';
$lang['LicenseBridge.row_meta.connection_note'] = 'Saving tests the connection: the bridge must answer with the token accepted.';

// Package fields
$lang['LicenseBridge.package_fields.package_identifier'] = 'Bridge Product ID';
$lang['LicenseBridge.package_fields.tooltip.package_identifier'] = 'The product id in the bridge\'s config/products.json (e.g. 12 for cPanel, 13 for LiteSpeed). Leave blank to use this package\'s Blesta id.';

// Service fields
$lang['LicenseBridge.service_fields.license_ip'] = 'IP Address';
$lang['LicenseBridge.service_field.tooltip.license_ip'] = 'The public IP address of the server the licence is for.';
$lang['LicenseBridge.service_field.tooltip.license_ip_admin'] = 'The IP address of the server the licence is for. Changing it on an active service moves the licence (it counts as one of the product\'s IP changes).';

// Service info
$lang['LicenseBridge.service_info.status'] = 'Licence Status';
$lang['LicenseBridge.service_info.ip'] = 'IP Address';
$lang['LicenseBridge.service_info.license_key'] = 'Licence Key';
$lang['LicenseBridge.service_info.license_ref'] = 'Bridge Service ID';
$lang['LicenseBridge.service_info.product'] = 'Bridge Product';
$lang['LicenseBridge.service_info.type'] = 'Licence Type';
$lang['LicenseBridge.service_info.expires_at'] = 'Expires';
$lang['LicenseBridge.service_info.paid_until'] = 'Paid Until';
$lang['LicenseBridge.service_info.ip_changes_left'] = 'IP Changes Left';
$lang['LicenseBridge.service_info.unlimited'] = 'Unlimited';
$lang['LicenseBridge.service_info.install_command'] = 'Install Command';
$lang['LicenseBridge.service_info.no_install_command'] = 'Shown once the licence is active.';
$lang['LicenseBridge.service_info.last_error'] = 'Last Error';
$lang['LicenseBridge.service_info.not_provisioned'] = 'The licence has not been ordered yet.';
$lang['LicenseBridge.service_info.unavailable'] = 'The licence could not be read from the bridge: %1$s';

// Client tab
$lang['LicenseBridge.tab_client_licence'] = 'Licence';
$lang['LicenseBridge.tab_client_licence.heading_licence'] = 'Your Licence';
$lang['LicenseBridge.tab_client_licence.heading_install'] = 'Install Command';
$lang['LicenseBridge.tab_client_licence.install_help'] = 'Run this as root on the server with the IP address above.';
$lang['LicenseBridge.tab_client_licence.heading_change_ip'] = 'Move the Licence to Another IP';
$lang['LicenseBridge.tab_client_licence.change_ip_help'] = 'The licence moves to the new IP at once; the old IP stops being licensed.';
$lang['LicenseBridge.tab_client_licence.changes_left'] = 'IP changes left: %1$s';
$lang['LicenseBridge.tab_client_licence.no_changes_left'] = 'This licence has no IP changes left. Please contact support to move it.';
$lang['LicenseBridge.tab_client_licence.not_active'] = 'The IP can be changed while the service is active.';
$lang['LicenseBridge.tab_client_licence.field_new_ip'] = 'New IP Address';
$lang['LicenseBridge.tab_client_licence.submit'] = 'Change IP';

// Success messages
$lang['LicenseBridge.!success.change_ip'] = 'The licence now belongs to %1$s.';

// Errors
$lang['LicenseBridge.!error.curl.unavailable'] = 'The License Bridge module needs PHP\'s curl extension.';
$lang['LicenseBridge.!error.name.empty'] = 'Please enter a name for this bridge.';
$lang['LicenseBridge.!error.scheme.valid'] = 'Please choose https or http.';
$lang['LicenseBridge.!error.host.valid'] = 'Please enter the bridge\'s host name or IP address only (no https://, no path).';
$lang['LicenseBridge.!error.port.valid'] = 'The port must be a number from 1 to 65535, or blank.';
$lang['LicenseBridge.!error.token.empty'] = 'Please enter the bridge\'s PROVISIONING_TOKEN.';
$lang['LicenseBridge.!error.token.missing'] = 'This bridge has no stored token: please enter the bridge\'s PROVISIONING_TOKEN.';
$lang['LicenseBridge.!error.token.unauthorized'] = 'The bridge refused the token (HTTP 401): enter the bridge\'s PROVISIONING_TOKEN.';
$lang['LicenseBridge.!error.connection.unreachable'] = 'The bridge could not be reached: %1$s';
$lang['LicenseBridge.!error.connection.answer'] = 'The bridge answered HTTP %1$s: %2$s';
$lang['LicenseBridge.!error.meta[package_identifier].valid'] = 'The bridge product id may hold only letters, digits and . _ : - (at most 64).';
$lang['LicenseBridge.!error.license_ip.valid'] = 'Please enter a valid IPv4 or IPv6 address.';
$lang['LicenseBridge.!error.module_row.missing'] = 'No bridge is set for this service: add one under Settings > Modules > License Bridge, and give the package a bridge or a bridge group.';
$lang['LicenseBridge.!error.client_id.missing'] = 'The client of this service could not be found.';
$lang['LicenseBridge.!error.pricing_id.missing'] = 'The service\'s pricing is not one of the package\'s pricings.';
$lang['LicenseBridge.!error.pricing_id.cycle'] = 'License Bridge sells licences for 1, 3, 6, 12, 24 or 36 months (or 1, 2, 3 years); this term (%1$s %2$s) has no match, so nothing was ordered.';
$lang['LicenseBridge.!error.create.not_active'] = 'The bridge answered that the licence is %1$s, not active; the service was not activated.';
$lang['LicenseBridge.!error.no_licence'] = 'This service has no licence at the bridge (it was not provisioned through the module).';
// %1$s is the Blesta action (Activate, Suspend, ...); %2$s the bridge's error, its code and what to do, in the words all modules share.
$lang['LicenseBridge.!error.call'] = 'License Bridge (%1$s): %2$s';
$lang['LicenseBridge.!error.change_ip.limit'] = 'This licence has no IP changes left (the product allows a limited number). Please contact support to move it.';
$lang['LicenseBridge.!error.change_ip.in_use'] = 'That IP address already has a licence of this kind.';
$lang['LicenseBridge.!error.change_ip.not_active'] = 'The IP can only be changed while the service is active.';
$lang['LicenseBridge.!error.internal'] = 'The License Bridge module failed unexpectedly (%1$s); nothing was changed in Blesta.';
$lang['LicenseBridge.!error.change_ip.same'] = 'The licence already belongs to this IP address.';
