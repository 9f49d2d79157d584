package policy

import "slices"

// Scopes lists every scope the spec names. A key created without --scopes gets "*", all of them.
var Scopes = []string{
	"events:read", "events:write", "webhooks:read", "webhooks:write", "company:read", "company:write",
	"users:read", "users:write", "contacts:read", "contacts:write", "contacts.sensitive:read",
	"activities:read", "activities:write", "portal:write", "admin:write", "documents:read", "documents:write",
	"contracts:read", "contracts:write", "correspondence:read", "correspondence:write",
	"signatures:read", "signatures:write", "leads:read", "leads:write", "tasks:read", "tasks:write",
	"appointments:read", "appointments:write", "offers:write", "integrations:read", "integrations:write",
	"portfolio:read", "portfolio:write", "commissions:read", "commissions:write", "emails:read", "emails:write",
	"marketing:read", "marketing:write", "automations:read", "automations:write",
	"calculators:read", "calculators:write", "advice:read", "advice:write", "reports:read",
	"imports:write", "privacy:write",
}

// ValidScope reports whether s is a known scope or "*".
func ValidScope(s string) bool { return s == "*" || slices.Contains(Scopes, s) }

// Features are the licensable company features.
var Features = []string{
	"leads", "customer_portal", "digital_signature", "offers", "calculators", "marketing", "automations",
	"integrations", "emails", "advice", "portfolio", "commissions",
}

// ValidFeature reports whether f is a known feature.
func ValidFeature(f string) bool { return slices.Contains(Features, f) }

// featureOf maps a scope resource to the feature its endpoints need.
var featureOf = map[string]string{
	"leads":      "leads",
	"portal":     "customer_portal",
	"signatures": "digital_signature",
	"advice":     "advice",
	"emails":     "emails",
	"marketing":  "marketing",
}

// FeatureFor returns the feature resource needs, or "".
func FeatureFor(resource string) string { return featureOf[resource] }

// Roles are the user roles.
var Roles = []string{"admin", "manager", "agent"}
