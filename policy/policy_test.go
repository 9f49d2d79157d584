package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

func TestPolicy_EveryScopeGrantsItself(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	dom := uuid.NewString()
	for _, s := range Scopes {
		res, act, _ := strings.Cut(s, ":")
		if !e.ScopeAllows([]string{s}, dom, res, act) {
			t.Errorf("scope %s does not grant %s %s: policy.csv lacks it", s, res, act)
		}
		if act == "write" && !e.ScopeAllows([]string{s}, dom, res, "read") {
			t.Errorf("scope %s does not imply %s:read", s, res)
		}
		if act == "read" && e.ScopeAllows([]string{s}, dom, res, "write") {
			t.Errorf("scope %s grants write", s)
		}
	}
}

func TestPolicy_Check(t *testing.T) {
	e := Default()
	company := uuid.New()
	p := func(scopes []string, role string, features ...string) *tenancy.Principal {
		pr := &tenancy.Principal{CompanyID: company, LiveCompanyID: company, Scopes: scopes, Features: features}
		if role != "" {
			pr.UserID, pr.UserRole = uuid.New(), role
		}
		return pr
	}
	for _, tc := range []struct {
		name  string
		p     *tenancy.Principal
		scope string
		code  string // "" = allowed
	}{
		{"all scopes", p([]string{"*"}, ""), "users:read", ""},
		{"exact scope", p([]string{"users:read"}, ""), "users:read", ""},
		{"write implies read", p([]string{"users:write"}, ""), "users:read", ""},
		{"read does not imply write", p([]string{"users:read"}, ""), "users:write", "insufficient_scope"},
		{"other resource", p([]string{"contacts:write"}, ""), "users:read", "insufficient_scope"},
		{"sensitive needs its own scope", p([]string{"contacts:write"}, ""), "contacts.sensitive:read", "insufficient_scope"},
		{"no scopes", p(nil, ""), "users:read", "insufficient_scope"},
		{"feature licensed", p([]string{"*"}, "", "leads"), "leads:read", ""},
		{"feature missing", p([]string{"*"}, ""), "leads:read", "feature_not_licensed"},
		{"admin role", p([]string{"*"}, "admin"), "admin:write", ""},
		{"manager role", p([]string{"*"}, "manager"), "admin:write", "role_forbidden"},
		{"agent writes contacts", p([]string{"*"}, "agent"), "contacts:write", ""},
		{"agent may not write users", p([]string{"*"}, "agent"), "users:write", "role_forbidden"},
		{"agent reads users", p([]string{"*"}, "agent"), "users:read", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Check(tc.p, tc.scope)
			got := ""
			if err != nil {
				got = errCode(err)
			}
			if got != tc.code {
				t.Errorf("Check(%s) = %q (%v), want %q", tc.scope, got, err, tc.code)
			}
		})
	}
}

func errCode(err error) string {
	var e *errs.E
	if errors.As(err, &e) {
		return e.Code
	}
	return err.Error()
}

func TestPolicy_ScopesAndFeaturesKnown(t *testing.T) {
	if !ValidScope("*") || ValidScope("users:delete") {
		t.Error("ValidScope")
	}
	if !slices.Contains(Features, "leads") || FeatureFor("leads") != "leads" || FeatureFor("users") != "" {
		t.Error("features")
	}
}

func TestPolicy_Visibility(t *testing.T) {
	for role, want := range map[string]string{
		"admin": tenancy.VisibilityAll, "manager": tenancy.VisibilityAll,
		"agent": tenancy.VisibilityOwnAndDelegated, "intern": tenancy.VisibilityOwnAndDelegated,
		"": tenancy.VisibilityOwnAndDelegated,
	} {
		if got := Visibility(role); got != want {
			t.Errorf("Visibility(%q) = %q, want %q", role, got, want)
		}
	}
	if got := Default().RolesSeeingAll(); !slices.Equal(got, []string{"admin", "manager"}) {
		t.Errorf("RolesSeeingAll = %v", got)
	}
	// "visibility" is no scope: no credential can be granted it.
	if ValidScope("visibility:all") {
		t.Error("visibility:all must not be a scope")
	}
	p := &tenancy.Principal{}
	Default().VisibilityOf(p)
	if p.Visibility != tenancy.VisibilityAll {
		t.Errorf("company credential: %q", p.Visibility)
	}
}

// TestPolicy_IsAdmin: the company admin credential of issue 20 (webhook endpoints, calendar
// feed tokens) is one holding admin:write that, when user-bound, belongs to an admin; and the
// roles allowed admin:write are exactly "admin", which the webhook endpoints' row-level
// security policy names (migrations/20261127130400_webhook_endpoint_owner.sql): a role given
// admin:write here must be added there.
func TestPolicy_IsAdmin(t *testing.T) {
	e := Default()
	company := uuid.New()
	for _, tc := range []struct {
		name   string
		scopes []string
		role   string // "" for a company-level credential
		want   bool
	}{
		{"company key with every scope", []string{"*"}, "", true},
		{"company key with admin:write", []string{"admin:write", "webhooks:read"}, "", true},
		{"company key without admin:write", []string{"webhooks:write", "appointments:write"}, "", false},
		{"admin's key", []string{"*"}, "admin", true},
		{"admin's key without admin:write", []string{"webhooks:write"}, "admin", false},
		{"manager's key with every scope", []string{"*"}, "manager", false},
		{"agent's key with every scope", []string{"*"}, "agent", false},
	} {
		p := &tenancy.Principal{CompanyID: company, LiveCompanyID: company, Scopes: tc.scopes, UserRole: tc.role}
		if tc.role != "" {
			p.UserID = uuid.New()
		}
		if got := e.IsAdmin(p); got != tc.want {
			t.Errorf("%s: IsAdmin %v, want %v", tc.name, got, tc.want)
		}
	}
	var admins []string
	for _, r := range Roles {
		if e.RoleAllows(r, "*", "admin", "write") {
			admins = append(admins, r)
		}
	}
	if !slices.Equal(admins, []string{"admin"}) {
		t.Errorf("roles allowed admin:write %v: the webhook endpoints' RLS policy names only admin", admins)
	}
}
