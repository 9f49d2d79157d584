// Package operator holds what the operator does outside the API: activate companies, license
// features, create users and issue or withdraw keys. The CLI (cmd/brokerdesk) and the test
// harness call it; no HTTP route does.
package operator

import (
	"context"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/publicsuffix"

	"github.com/brokerdesk/brokerdesk/app/account"
	"github.com/brokerdesk/brokerdesk/app/delegations"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/users"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/apikey"
	"github.com/brokerdesk/brokerdesk/ent/company"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Service runs operator work on a client over the owner's connections (tenancy.Driver), each
// call in one transaction as the brokerdesk_operator role.
type Service struct {
	client *ent.Client
	events *events.Service
}

// New returns the service.
func New(client *ent.Client) *Service { return &Service{client: client, events: events.NewService()} }

// tx runs f in one operator transaction.
func (s *Service) tx(ctx context.Context, f func(ctx context.Context, db *ent.Client) error) error {
	ctx = tenancy.WithOperator(ctx)
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return err
	}
	ctx = tenancy.WithClient(ctx, tx.Client())
	if err := f(ctx, tx.Client()); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// onOne is an operator command on one row named by ref: in one transaction (Service.tx), the
// row find gives (its not-found answer as find words it), then do on it; the answer is view of
// the row do returns (nothing when a step failed).
func onOne[R, T any](ctx context.Context, s *Service, ref string, find func(context.Context, *ent.Client, string) (R, error),
	do func(context.Context, *ent.Client, R) (R, error), view func(R) T) (T, error) {
	var out T
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		r, err := find(ctx, db, ref)
		if err != nil {
			return err
		}
		if r, err = do(ctx, db, r); err != nil {
			return err
		}
		out = view(r)
		return nil
	})
	return out, err
}

// Company is a live company with its sandbox twin.
type Company struct {
	ID        uuid.UUID `json:"id"`
	SandboxID uuid.UUID `json:"sandboxId"`
	Name      string    `json:"name"`
	Features  []string  `json:"features"`
	Status    string    `json:"status"`
}

func checkFeatures(features []string) error {
	for _, f := range features {
		if !policy.ValidFeature(f) {
			return errs.InvalidField("features", "unknown_feature",
				fmt.Sprintf("%q is not a feature (known: %s)", f, strings.Join(policy.Features, ", ")))
		}
	}
	return nil
}

// CreateCompany activates a company and its sandbox twin with the same name and features.
func (s *Service) CreateCompany(ctx context.Context, name string, features []string) (Company, error) {
	var out Company
	if strings.TrimSpace(name) == "" {
		return out, errs.InvalidField("name", "required", "is required")
	}
	if err := checkFeatures(features); err != nil {
		return out, err
	}
	features = uniq(features)
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		live, err := db.Company.Create().SetName(name).SetFeatures(features).Save(ctx)
		if err != nil {
			return err
		}
		sb, err := db.Company.Create().SetName(name).SetFeatures(features).SetSandbox(true).
			SetLiveCompanyID(live.ID).Save(ctx)
		if err != nil {
			return err
		}
		// The standard documents are rendered once: the twin has the live company's name and address.
		docs, err := renderStandardDocuments(live, time.Now()) // doctemplates.go
		if err != nil {
			return err
		}
		for _, co := range []uuid.UUID{live.ID, sb.ID} {
			if err := createDefaultStages(ctx, db, co); err != nil {
				return err
			}
			if _, err := seedTemplates(ctx, db, co); err != nil { // templates.go
				return err
			}
			if err := seedDocuments(ctx, db, co, docs); err != nil { // doctemplates.go
				return err
			}
		}
		out = Company{ID: live.ID, SandboxID: sb.ID, Name: live.Name, Features: features, Status: string(live.Status)}
		return nil
	})
	return out, err
}

// SetFeatures replaces the licensed features of a company and its sandbox twin.
func (s *Service) SetFeatures(ctx context.Context, companyID uuid.UUID, features []string) (Company, error) {
	var out Company
	if err := checkFeatures(features); err != nil {
		return out, err
	}
	features = uniq(features)
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		live, err := liveCompany(ctx, db, companyID)
		if err != nil {
			return err
		}
		n, err := db.Company.Update().
			Where(company.Or(company.ID(live.ID), company.LiveCompanyID(live.ID))).
			SetFeatures(features).Save(ctx)
		if err != nil {
			return err
		}
		if n != 2 {
			return fmt.Errorf("set features: updated %d companies, want 2", n)
		}
		both, err := db.Company.Query().Where(company.Or(company.ID(live.ID), company.LiveCompanyID(live.ID))).All(ctx)
		if err != nil {
			return err
		}
		for _, co := range both {
			if err := s.events.Record(tenancy.WithCompany(ctx, co.ID), "company.updated", account.NewCompanyView(co)); err != nil {
				return err
			}
			if co.Sandbox {
				out = Company{ID: live.ID, SandboxID: co.ID, Name: live.Name, Features: features, Status: string(live.Status)}
			}
		}
		return nil
	})
	return out, err
}

// ListCompanies lists the live companies.
func (s *Service) ListCompanies(ctx context.Context) ([]Company, error) {
	var out []Company
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		all, err := db.Company.Query().Order(ent.Asc(company.FieldCreatedAt)).All(ctx)
		if err != nil {
			return err
		}
		sandbox := map[uuid.UUID]uuid.UUID{}
		for _, c := range all {
			if c.LiveCompanyID != nil {
				sandbox[*c.LiveCompanyID] = c.ID
			}
		}
		for _, c := range all {
			if !c.Sandbox {
				out = append(out, Company{ID: c.ID, SandboxID: sandbox[c.ID], Name: c.Name, Features: c.Features, Status: string(c.Status)})
			}
		}
		return nil
	})
	return out, err
}

// DefaultStages are the lead stages every company has: new (first) and converted (final).
var DefaultStages = []struct {
	Key, Name, Color string
	Position         int
	Final            bool
}{
	{"new", "Neu", "#3b82f6", 0, false},
	{"converted", "Konvertiert", "#22c55e", 1000, true},
}

func createDefaultStages(ctx context.Context, db *ent.Client, companyID uuid.UUID) error {
	for _, st := range DefaultStages {
		if err := db.LeadStage.Create().SetCompanyID(companyID).SetKey(st.Key).SetName(st.Name).
			SetColor(st.Color).SetPosition(st.Position).SetIsFinal(st.Final).Exec(ctx); err != nil {
			return fmt.Errorf("default lead stage %s: %w", st.Key, err)
		}
	}
	return nil
}

func liveCompany(ctx context.Context, db *ent.Client, id uuid.UUID) (*ent.Company, error) {
	c, err := db.Company.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "company %s", id)
	}
	if c.Sandbox {
		return nil, errs.InvalidField("company", "sandbox_company", "name the live company; its sandbox twin follows it")
	}
	return c, nil
}

// User is a user and its sandbox twin.
type User struct {
	ID        uuid.UUID `json:"id"`
	SandboxID uuid.UUID `json:"sandboxId"`
	CompanyID uuid.UUID `json:"companyId"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
}

// NewUser is what CreateUser needs.
type NewUser struct {
	CompanyID           uuid.UUID
	Email               string
	FirstName, LastName string
	Role                string
}

// CreateUser creates a user in a live company and its twin in the sandbox, so that test keys
// can be bound to the same person.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (User, error) {
	var out User
	email := strings.ToLower(strings.TrimSpace(in.Email))
	var v errs.Invalid
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		v.Add("email", "invalid_email", "must be an e-mail address")
	}
	if in.Role == "" {
		in.Role = "agent"
	}
	v.Check("role", slices.Contains(policy.Roles, in.Role), "invalid_enum", "must be one of "+strings.Join(policy.Roles, ", "))
	if err := v.Err(); err != nil {
		return out, err
	}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		live, err := liveCompany(ctx, db, in.CompanyID)
		if err != nil {
			return err
		}
		sb, err := db.Company.Query().Where(company.LiveCompanyID(live.ID)).Only(ctx)
		if err != nil {
			return err
		}
		var ids [2]uuid.UUID
		liveID := uuid.Must(uuid.NewV7())
		for i, co := range []uuid.UUID{live.ID, sb.ID} {
			// The sandbox twin is a synthetic person (same role, so test keys bound to it act as
			// the real user would): sandbox data is shared with integrators' test systems, which
			// have no business with staff names and addresses.
			id, mail, first, last := liveID, email, in.FirstName, in.LastName
			if co == sb.ID {
				id = uuid.Must(uuid.NewV7())
				mail = SandboxEmail(liveID)
				first, last = "Sandbox", "User "+liveID.String()[:8]
			}
			u, err := db.User.Create().SetID(id).SetCompanyID(co).SetEmail(mail).SetFirstName(first).
				SetLastName(last).SetRole(user.Role(in.Role)).Save(ctx)
			if ent.IsConstraintError(err) {
				return errs.Conflict("email_taken", "a user with e-mail %s exists in this company", email)
			}
			if err != nil {
				return err
			}
			if err := s.events.Record(tenancy.WithCompany(ctx, co), "user.created", users.NewView(u, "de")); err != nil {
				return err
			}
			ids[i] = u.ID
		}
		out = User{ID: ids[0], SandboxID: ids[1], CompanyID: live.ID, Email: email, Role: in.Role}
		return nil
	})
	return out, err
}

// SandboxEmail is the synthetic e-mail address of the sandbox twin of the live user liveID.
func SandboxEmail(liveID uuid.UUID) string { return "sandbox+" + liveID.String() + "@example.invalid" }

// Key is an issued key. Secret is set only when the key was just created.
type Key struct {
	ID             uuid.UUID  `json:"id"`
	CompanyID      uuid.UUID  `json:"companyId"`
	UserID         *uuid.UUID `json:"userId"`
	Kind           string     `json:"kind"`
	Env            string     `json:"env"`
	Prefix         string     `json:"prefix"`
	Scopes         []string   `json:"scopes"`
	AllowedDomains []string   `json:"allowedDomains"`
	Status         string     `json:"status"`
	CreatedAt      time.Time  `json:"createdAt"`
	Secret         string     `json:"key,omitempty"`
}

func newKey(k *ent.APIKey) Key {
	return Key{ID: k.ID, CompanyID: k.CompanyID, UserID: k.UserID, Kind: string(k.Kind), Env: string(k.Env),
		Prefix: k.Prefix, Scopes: k.Scopes, AllowedDomains: k.AllowedDomains, Status: string(k.Status), CreatedAt: k.CreatedAt}
}

// NewKeyInput is what CreateKey needs. CompanyID names the live company; Env "test" issues the
// key on its sandbox twin. UserID names the live user; a test key binds to the user's twin.
type NewKeyInput struct {
	CompanyID      uuid.UUID
	UserID         *uuid.UUID
	Kind           string
	Env            string
	Scopes         []string
	AllowedDomains []string
	Name           string
}

// CreateKey issues a key and returns it with its secret, shown this once.
func (s *Service) CreateKey(ctx context.Context, in NewKeyInput) (Key, error) {
	var out Key
	var v errs.Invalid
	v.Check("kind", in.Kind == tenancy.KindSecret || in.Kind == tenancy.KindPublishable, "invalid_enum", "must be secret or publishable")
	v.Check("env", in.Env == tenancy.EnvLive || in.Env == tenancy.EnvTest, "invalid_enum", "must be live or test")
	if in.Kind == tenancy.KindSecret && len(in.Scopes) == 0 {
		in.Scopes = []string{"*"}
	}
	if in.Kind == tenancy.KindPublishable {
		v.Check("scopes", len(in.Scopes) == 0, "not_allowed", "publishable keys carry no scopes: they serve only the lead intake")
		v.Check("user", in.UserID != nil, "required", "a publishable key belongs to one user, the default owner of its leads")
		in.Scopes = []string{}
	} else {
		v.Check("allowedDomains", len(in.AllowedDomains) == 0, "not_allowed", "only publishable keys carry allowed domains")
	}
	for _, sc := range in.Scopes {
		v.Check("scopes", policy.ValidScope(sc), "unknown_scope", fmt.Sprintf("%q is not a scope", sc))
	}
	for i, d := range in.AllowedDomains {
		d = strings.ToLower(strings.TrimSpace(d))
		if !validDomain(d) {
			v.Check("allowedDomains", false, "invalid_domain", fmt.Sprintf("%q is not a domain name", d))
		} else {
			v.Check("allowedDomains", !publicSuffix(d), "public_suffix", fmt.Sprintf(
				"%q is a public suffix: anyone can have a site below it; name your own domain, such as example.%s", d, d))
		}
		in.AllowedDomains[i] = d
	}
	if err := v.Err(); err != nil {
		return out, err
	}
	if in.AllowedDomains == nil {
		in.AllowedDomains = []string{}
	}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		live, err := liveCompany(ctx, db, in.CompanyID)
		if err != nil {
			return err
		}
		target := live.ID
		if in.Env == tenancy.EnvTest {
			sb, err := db.Company.Query().Where(company.LiveCompanyID(live.ID)).Only(ctx)
			if err != nil {
				return err
			}
			target = sb.ID
		}
		var userID *uuid.UUID
		if in.UserID != nil {
			u, err := db.User.Query().Where(user.ID(*in.UserID), user.CompanyID(live.ID)).Only(ctx)
			if ent.IsNotFound(err) { // not errs.FromEnt: the message names the company after "not found"
				return errs.NotFound("user %s not found in company %s", *in.UserID, live.ID)
			}
			if err != nil {
				return err
			}
			if target != live.ID { // the user's sandbox twin
				// twins made before synthetic sandbox users carry the live user's e-mail
				if u, err = db.User.Query().Where(user.CompanyID(target), user.EmailIn(SandboxEmail(u.ID), u.Email)).Only(ctx); err != nil {
					return fmt.Errorf("sandbox twin of user %s: %w", *in.UserID, err)
				}
			}
			userID = &u.ID
		}
		secret, prefix, hash := tenancy.NewKey(in.Kind, in.Env)
		k, err := db.APIKey.Create().SetCompanyID(target).SetNillableUserID(userID).
			SetKind(apikey.Kind(in.Kind)).SetEnv(apikey.Env(in.Env)).SetPrefix(prefix).SetHash(hash).
			SetScopes(uniq(in.Scopes)).SetAllowedDomains(uniq(in.AllowedDomains)).SetName(in.Name).Save(ctx)
		if err != nil {
			return err
		}
		out = newKey(k)
		out.Secret = secret
		return nil
	})
	return out, err
}

// ListKeys lists the keys of a company (live and sandbox), or of every company when companyID
// is uuid.Nil. Secrets are never shown again.
func (s *Service) ListKeys(ctx context.Context, companyID uuid.UUID) ([]Key, error) {
	var out []Key
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		q := db.APIKey.Query().Order(ent.Asc(apikey.FieldCreatedAt))
		if companyID != uuid.Nil {
			live, err := liveCompany(ctx, db, companyID)
			if err != nil {
				return err
			}
			q.Where(apikey.HasCompanyWith(company.Or(company.ID(live.ID), company.LiveCompanyID(live.ID))))
		}
		keys, err := q.All(ctx)
		for _, k := range keys {
			out = append(out, newKey(k))
		}
		return err
	})
	return out, err
}

// findKey finds a key by id or by its prefix.
func findKey(ctx context.Context, db *ent.Client, ref string) (*ent.APIKey, error) {
	q := db.APIKey.Query()
	if id, err := uuid.Parse(ref); err == nil {
		q.Where(apikey.ID(id))
	} else {
		q.Where(apikey.Prefix(ref))
	}
	k, err := q.Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil, errs.NotFound("key %s not found", ref)
	case ent.IsNotSingular(err):
		return nil, errs.Conflict("ambiguous_key", "more than one key has prefix %s; name it by id", ref)
	}
	return k, err
}

// DeactivateKey makes a key unusable from the next request on, on every replica: credentials
// are looked up on every request, never cached.
func (s *Service) DeactivateKey(ctx context.Context, ref string) (Key, error) {
	return onOne(ctx, s, ref, findKey, func(ctx context.Context, _ *ent.Client, k *ent.APIKey) (*ent.APIKey, error) {
		return k.Update().SetStatus(apikey.StatusInactive).Save(ctx)
	}, newKey)
}

// DeleteKey removes a key for good.
func (s *Service) DeleteKey(ctx context.Context, ref string) error {
	_, err := onOne(ctx, s, ref, findKey, func(ctx context.Context, db *ent.Client, k *ent.APIKey) (*ent.APIKey, error) {
		return k, db.APIKey.DeleteOne(k).Exec(ctx)
	}, newKey)
	return err
}

func validDomain(d string) bool {
	if d == "" || len(d) > 253 || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") || !strings.Contains(d, ".") && d != "localhost" {
		return false
	}
	for _, r := range d {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// publicSuffix reports whether d is a suffix under which anyone may register a name (the
// public suffix list: ICANN's com, co.uk and the private github.io, blogspot.com ...). As an
// allowed domain it would admit every site below it, strangers' included, as the key's
// origin and _redirect target. localhost is the development host, not a suffix.
func publicSuffix(d string) bool {
	if d == "localhost" {
		return false
	}
	suffix, _ := publicsuffix.PublicSuffix(d)
	return suffix == d
}

func uniq(s []string) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// CreateDelegation lets delegate see delegator's contacts and leads in company (live or
// sandbox) until validUntil (nil: until deleted); the rules of POST /users/{id}/delegations.
func (s *Service) CreateDelegation(ctx context.Context, company, delegator uuid.UUID, in delegations.CreateInput) (delegations.View, error) {
	var out delegations.View
	svc := delegations.NewService(nil)
	err := s.tx(tenancy.WithCompany(ctx, company), func(ctx context.Context, _ *ent.Client) error {
		d, err := svc.Create(ctx, delegator, in)
		if err == nil {
			out = delegations.NewView(d, svc.Now())
		}
		return err
	})
	return out, err
}

// ListDelegations lists the delegations delegator gave in company.
func (s *Service) ListDelegations(ctx context.Context, company, delegator uuid.UUID) ([]delegations.View, error) {
	var out []delegations.View
	svc := delegations.NewService(nil)
	err := s.tx(tenancy.WithCompany(ctx, company), func(ctx context.Context, _ *ent.Client) error {
		ds, err := svc.List(ctx, delegator)
		for _, d := range ds {
			out = append(out, delegations.NewView(d, svc.Now()))
		}
		return err
	})
	return out, err
}

// DeleteDelegation removes delegation id of delegator in company.
func (s *Service) DeleteDelegation(ctx context.Context, company, delegator, id uuid.UUID) error {
	return s.tx(tenancy.WithCompany(ctx, company), func(ctx context.Context, _ *ent.Client) error {
		return delegations.NewService(nil).Delete(ctx, delegator, id)
	})
}
