// Package search serves GET /search (issue 24): one ranked list over contacts, leads, contracts
// and documents for a query of two or more characters, as the credential may see them
// (docs/decisions/search.md).
package search

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/policy"
)

// Query limits: q from 2 to 200 characters after trimming, limit from 1 to 50 (default 10).
const (
	minQuery     = 2
	maxQuery     = 200
	defaultLimit = 10
	maxLimit     = 50
)

// Handler serves GET /search.
type Handler struct{ svc *Service }

// NewHandler builds the handler.
func NewHandler(svc *Service) *Handler { return &Handler{svc: svc} }

// Mount registers the route (scope contacts:read, the spec's).
func (h *Handler) Mount(r fiber.Router) {
	r.Get("/search", policy.Require("contacts:read"), h.search)
}

// search handles GET /search.
func (h *Handler) search(c *fiber.Ctx) error {
	q, err := parseQuery(c)
	if err != nil {
		return err
	}
	hits, err := h.svc.Search(c.UserContext(), q)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"data": hits})
}

// pluralTypes lets types name the plural, as the issue's text does ("types of contacts,
// leads, …"): each is the singular type of a hit.
var pluralTypes = map[string]string{"contacts": TypeContact, "leads": TypeLead, "contracts": TypeContract, "documents": TypeDocument}

// parseQuery reads q, types and limit; every bad one is listed in one 422.
func parseQuery(c *fiber.Ctx) (Query, error) {
	var v errs.Invalid
	out := Query{Types: Types, Limit: defaultLimit, Lang: httpx.Lang(c)}

	// Control characters (a NUL, which PostgreSQL's text refuses, among them) separate words
	// like white space.
	q := strings.TrimFunc(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, c.Query("q")), unicode.IsSpace)
	switch n := utf8.RuneCountInString(q); {
	case c.Query("q") == "":
		v.Add("q", "required", "is required")
	case n < minQuery:
		v.Add("q", "too_short", "must have at least 2 characters besides white space")
	case n > maxQuery:
		v.Add("q", "too_long", "must have at most 200 characters")
	}
	out.Q = q

	allowed := append(append([]string{}, Types...), "contacts", "leads", "contracts", "documents")
	if ts := httpx.QueryEnums(c, &v, "types", allowed); ts != nil {
		seen := map[string]bool{}
		out.Types = nil
		for _, t := range Types { // the default's order; the ranking decides the list's
			for _, given := range ts {
				if s, ok := pluralTypes[given]; ok {
					given = s
				}
				if given == t && !seen[t] {
					seen[t] = true
					out.Types = append(out.Types, t)
				}
			}
		}
	}

	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			v.Add("limit", "invalid_integer", "must be an integer from 1 to 50")
		case n < 1 || n > maxLimit:
			v.Add("limit", "out_of_range", "must be from 1 to 50")
		default:
			out.Limit = n
		}
	}
	return out, v.Err()
}
