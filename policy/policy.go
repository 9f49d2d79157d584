// Package policy decides what a credential may do: Casbin (model.conf, policy.csv, both embedded
// and reviewed like code) answers scope and role questions, and Require guards each route.
package policy

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	"github.com/casbin/casbin/v2/util"
	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

var (
	//go:embed model.conf
	modelText string
	//go:embed policy.csv
	policyText string
)

// Enforcer answers whether a principal may act on a resource.
type Enforcer struct {
	e *casbin.SyncedCachedEnforcer
}

// New loads the embedded model and policy.
func New() (*Enforcer, error) {
	m, err := model.NewModelFromString(modelText)
	if err != nil {
		return nil, fmt.Errorf("casbin model: %w", err)
	}
	e, err := casbin.NewSyncedCachedEnforcer(m)
	if err != nil {
		return nil, fmt.Errorf("casbin enforcer: %w", err)
	}
	// "*" domain role links (write implies read) apply in every company.
	e.AddNamedDomainMatchingFunc("g", "keyMatch", util.KeyMatch)
	if err := loadPolicy(e); err != nil {
		return nil, err
	}
	return &Enforcer{e: e}, nil
}

func loadPolicy(e *casbin.SyncedCachedEnforcer) error {
	for i, line := range strings.Split(policyText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ",")
		for j := range f {
			f[j] = strings.TrimSpace(f[j])
		}
		var err error
		switch f[0] {
		case "p":
			_, err = e.AddPolicy(toAny(f[1:])...)
		case "g":
			_, err = e.AddGroupingPolicy(toAny(f[1:])...)
		default:
			err = fmt.Errorf("unknown line type %q", f[0])
		}
		if err != nil {
			return fmt.Errorf("policy.csv line %d: %w", i+1, err)
		}
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ScopeAllows reports whether any of scopes grants action on resource in company dom.
func (e *Enforcer) ScopeAllows(scopes []string, dom, resource, action string) bool {
	for _, s := range scopes {
		if ok, _ := e.e.Enforce("scope:"+s, dom, resource, action); ok {
			return true
		}
	}
	return false
}

// RoleAllows reports whether a user of role may take action on resource in company dom.
func (e *Enforcer) RoleAllows(role, dom, resource, action string) bool {
	ok, _ := e.e.Enforce("role:"+role, dom, resource, action)
	return ok
}

// Check decides one scope ("contacts:read") for p: the credential's scopes must grant it, a
// user-bound credential's role must allow it, and the company must license the resource's
// feature. It returns a 403 error naming what is missing.
func (e *Enforcer) Check(p *tenancy.Principal, scope string) error {
	resource, action, ok := strings.Cut(scope, ":")
	if !ok {
		return fmt.Errorf("policy: malformed scope %q", scope)
	}
	dom := p.LiveCompanyID.String()
	if f := FeatureFor(resource); f != "" && !p.HasFeature(f) {
		return errs.Forbidden("feature_not_licensed", "the company's license does not include the feature %s", f)
	}
	if !e.ScopeAllows(p.Scopes, dom, resource, action) {
		return errs.Forbidden("insufficient_scope", "this credential lacks the scope %s", scope)
	}
	if p.HasUser() && !e.RoleAllows(p.UserRole, dom, resource, action) {
		return errs.Forbidden("role_forbidden", "the user's role %s may not use %s", p.UserRole, scope)
	}
	return nil
}

// AdminScope is the scope of company administration (delegations, custom fields, lead stages).
const AdminScope = "admin:write"

// IsAdmin reports whether p administers its company, as Check decides AdminScope: its scopes
// grant admin:write and, for a user-bound credential, its user's role is one that may (admin).
// A company-level key or client holding admin:write (or "*") is a company admin credential as
// well. Admin credentials see every webhook endpoint of the company and manage every user's
// calendar feed token; others only what their own credential made.
func (e *Enforcer) IsAdmin(p *tenancy.Principal) bool { return e.Check(p, AdminScope) == nil }

var shared = sync.OnceValues(New)

// Default returns the enforcer of the embedded policy, loaded once.
func Default() *Enforcer {
	e, err := shared()
	if err != nil {
		panic(err) // the embedded policy is tested; failing here is a build defect
	}
	return e
}

// Require guards a route with scope (see Check). The auth middleware has run before it.
func Require(scope string) fiber.Handler {
	e := Default()
	return func(c *fiber.Ctx) error {
		p, ok := tenancy.PrincipalFrom(c.UserContext())
		if !ok {
			return errs.Unauthenticated("missing_credential", "no credential")
		}
		if err := e.Check(p, scope); err != nil {
			return err
		}
		return c.Next()
	}
}
