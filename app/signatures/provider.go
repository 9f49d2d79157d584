package signatures

import (
	"context"
	"slices"

	"github.com/brokerdesk/brokerdesk/ent"
)

// A Provider carries a request to its signers. The spec names two providers, of which only one
// takes explicit signature fields; the product has one, the built-in provider (the hosted
// signing page of this package). A second one (an external service's API) would add itself to
// providers with its capabilities, and create would refuse what it cannot do before anything
// is stored.
type Provider interface {
	// Name is the value of the request's provider.
	Name() string
	// Capabilities say what the provider supports of a SignatureRequestCreate.
	Capabilities() Capabilities
	// Invite tells signers (the request's pending ones) where to sign: the first time
	// (reminder false) or again (POST …/remind). It runs in the transaction of ctx and sets
	// notified_at or reminded_at of each.
	Invite(ctx context.Context, r *ent.SignatureRequest, signers []*ent.SignatureSigner, reminder bool) error
}

// Capabilities are what a provider supports.
type Capabilities struct {
	// ExplicitFields: signature fields placed by the client (fields of the create body).
	ExplicitFields bool
}

// builtin is the built-in provider: a personal link by e-mail to the hosted signing page.
type builtin struct{ m *Module }

func (builtin) Name() string { return "builtin" }

func (builtin) Capabilities() Capabilities { return Capabilities{ExplicitFields: true} }

func (b builtin) Invite(ctx context.Context, r *ent.SignatureRequest, signers []*ent.SignatureSigner, reminder bool) error {
	return b.m.mailLinks(ctx, r, signers, reminder)
}

// DefaultProvider is the provider of a request that names none.
const DefaultProvider = "builtin"

// providers are the providers the server has, by name.
func (m *Module) providers() []Provider { return []Provider{builtin{m: m}} }

// provider is the provider called name; ok is false for one the server does not have.
func (m *Module) provider(name string) (Provider, bool) {
	ps := m.providers()
	i := slices.IndexFunc(ps, func(p Provider) bool { return p.Name() == name })
	if i < 0 {
		return nil, false
	}
	return ps[i], true
}

// ProviderNames are the names of the providers, for the error of an unknown one.
func (m *Module) providerNames() []string {
	var out []string
	for _, p := range m.providers() {
		out = append(out, p.Name())
	}
	return out
}
