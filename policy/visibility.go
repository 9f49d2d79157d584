package policy

import "github.com/brokerdesk/brokerdesk/tenancy"

// Visibility returns which contacts and leads a user of role sees: tenancy.VisibilityAll
// ("all") when the policy grants the role "visibility, all", else
// tenancy.VisibilityOwnAndDelegated. Unknown roles get own_and_delegated. Company-level
// credentials have no role and see all; callers decide that before asking (see VisibilityOf).
func (e *Enforcer) Visibility(role string) string {
	if role != "" && e.RoleAllows(role, "*", "visibility", "all") {
		return tenancy.VisibilityAll
	}
	return tenancy.VisibilityOwnAndDelegated
}

// Visibility is Default().Visibility(role).
func Visibility(role string) string { return Default().Visibility(role) }

// RolesSeeingAll lists the known roles whose visibility is all: the auth middleware pins
// app.visibility from it in the statement that resolves the credential.
func (e *Enforcer) RolesSeeingAll() []string {
	var out []string
	for _, r := range Roles {
		if e.Visibility(r) == tenancy.VisibilityAll {
			out = append(out, r)
		}
	}
	return out
}

// VisibilityOf completes p with its visibility as a request's auth middleware would: all for a
// company-level credential, the role's for a user-bound one. Background work acting for a
// credential (webhook deliveries) calls it before pinning a transaction as p.
func (e *Enforcer) VisibilityOf(p *tenancy.Principal) {
	if !p.HasUser() {
		p.Visibility = tenancy.VisibilityAll
		return
	}
	p.Visibility = e.Visibility(p.UserRole)
}
