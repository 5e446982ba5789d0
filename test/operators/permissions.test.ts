import { describe, expect, it } from "vitest";
import { permissionOf, requiredRole } from "../../src/admin/permissions.js";

// The one table of who may call which admin route (issue 26): a read is a viewer's, an action on
// licences and jobs an operator's, adoption, repairs and the reseller's accounts an admin's, and
// a route nobody listed is a read if it is a GET and an admin's otherwise.

describe("the admin API's permission table", () => {
  it.each([
    ["GET", "/admin/services/4711", "viewer"],
    ["GET", "/admin/licenses", "viewer"],
    ["GET", "/admin/jobs", "viewer"],
    ["GET", "/admin/balance", "viewer"],
    ["GET", "/admin/audit", "viewer"],
    ["GET", "/admin/forecast", "viewer"],
    ["HEAD", "/admin/jobs", "viewer"],
    ["POST", "/admin/jobs/42/retry", "operator"],
    ["POST", "/admin/jobs/42/cancel", "operator"],
    ["POST", "/admin/services/4711/suspend", "operator"],
    ["POST", "/admin/services/4711/resend-install-mail", "operator"],
    ["POST", "/admin/services/4711/reset-ip-changes", "operator"],
    ["POST", "/admin/renewals/due", "operator"],
    ["POST", "/admin/reconcile", "operator"],
    ["POST", "/admin/adopt", "admin"],
    ["POST", "/admin/reseller/7/credit", "admin"],
    ["POST", "/admin/sub-resellers", "admin"],
    ["POST", "/admin/sub-resellers/3/credit", "admin"],
    // Not listed: closed to all but admins until someone decides.
    ["POST", "/admin/something-new", "admin"],
    ["DELETE", "/admin/jobs/42", "admin"],
    ["POST", "/admin/jobs/42/retry/more", "admin"],
  ] as const)("%s %s needs %s", (method, path, role) => {
    expect(permissionOf(method, path).role).toBe(role);
  });

  it("a reconcile that repairs needs an admin; one that only looks, an operator", () => {
    expect(requiredRole("POST", "/admin/reconcile", { fix: true })).toBe("admin");
    expect(requiredRole("POST", "/admin/reconcile", { fix: false })).toBe("operator");
    expect(requiredRole("POST", "/admin/reconcile", {})).toBe("operator");
  });

  it("a refused action is audited under the route's action", () => {
    expect(permissionOf("POST", "/admin/jobs/42/retry").action).toBe("job.retry");
    expect(permissionOf("POST", "/admin/reconcile").action).toBe("reconcile.fix");
    expect(permissionOf("POST", "/admin/jobs/42/cancel").action).toBe("job.cancel");
    expect(permissionOf("POST", "/admin/services/4711/resend-install-mail").action).toBe("service.resend_install_mail");
    expect(permissionOf("POST", "/admin/services/4711/reset-ip-changes").action).toBe("service.reset_ip_changes");
  });
});
