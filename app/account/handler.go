// Package account serves who the caller is: /me and /company.
package account

import (
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Handler serves /me and /company.
type Handler struct{}

// NewHandler builds the handler.
func NewHandler() *Handler { return &Handler{} }

// Mount registers the routes. r authenticates every route it registers.
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/me", h.me)
	r.Get("/company", policy.Require("company:read"), h.company)
}

// CompanyView is the Company resource.
type CompanyView struct {
	ID        uuid.UUID          `json:"id"`
	Name      string             `json:"name"`
	Address   schematype.Address `json:"address"`
	Links     schematype.Links   `json:"links"`
	Features  []string           `json:"features"`
	Sandbox   bool               `json:"sandbox"`
	CreatedAt time.Time          `json:"createdAt"`
	UpdatedAt time.Time          `json:"updatedAt"`
}

func NewCompanyView(c *ent.Company) CompanyView {
	return CompanyView{ID: c.ID, Name: c.Name, Address: c.Address, Links: c.Links, Features: nonNil(c.Features),
		Sandbox: c.Sandbox, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MeView is the answer of GET /me.
type MeView struct {
	Company    MeCompany    `json:"company"`
	User       *MeUser      `json:"user"`
	Client     *MeClient    `json:"client"`
	Credential MeCredential `json:"credential"`
	Scopes     []string     `json:"scopes"`
}

// MeCompany names the company the request acts on.
type MeCompany struct {
	ID       uuid.UUID `json:"id"`
	Name     string    `json:"name"`
	Sandbox  bool      `json:"sandbox"`
	Features []string  `json:"features"`
}

// MeUser is the acting user of a user-bound credential.
type MeUser struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	FirstName string    `json:"firstName"`
	LastName  string    `json:"lastName"`
	Role      string    `json:"role"`
}

// MeClient is the OAuth client of an access token.
type MeClient struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// MeCredential describes the credential without revealing it.
type MeCredential struct {
	ID     uuid.UUID `json:"id"`
	Prefix string    `json:"prefix"`
	Kind   string    `json:"kind"`
	Env    string    `json:"env"`
}

// me handles GET /me: any valid credential may ask who it is. Everything it shows comes with
// the credential lookup's row (tenancy: auth_credential, auth_token), read in this request's
// transaction: no second read of the company or the user.
func (h *Handler) me(c *fiber.Ctx) error {
	p, _ := tenancy.PrincipalFrom(c.UserContext())
	v := MeView{
		Company:    MeCompany{ID: p.CompanyID, Name: p.CompanyName, Sandbox: p.Sandbox, Features: nonNil(p.Features)},
		Credential: MeCredential{ID: p.KeyID, Prefix: p.KeyPrefix, Kind: p.Kind, Env: p.Env},
		Scopes:     expandScopes(p.Scopes),
	}
	if p.ClientID != uuid.Nil {
		v.Client = &MeClient{ID: p.ClientID, Name: p.ClientName}
	}
	if p.HasUser() {
		v.User = &MeUser{ID: p.UserID, Email: p.UserEmail, FirstName: p.UserFirstName, LastName: p.UserLastName, Role: p.UserRole}
	}
	return c.JSON(v)
}

// expandScopes lists the scopes a credential holds, "*" spelled out. The result is only
// encoded, never changed: policy.Scopes itself, not a copy (the copy was 5% of the bytes
// GET /me allocated).
func expandScopes(s []string) []string {
	if slices.Contains(s, "*") {
		return policy.Scopes
	}
	return nonNil(s)
}

// company handles GET /company.
func (h *Handler) company(c *fiber.Ctx) error {
	ctx := c.UserContext()
	p, _ := tenancy.PrincipalFrom(ctx)
	co, err := tenancy.Client(ctx).Company.Get(ctx, p.CompanyID)
	if err != nil {
		return err
	}
	return httpx.OK(c, NewCompanyView(co), co.Version)
}
