package search

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The types of hits, the values of a hit's type and of the types parameter.
const (
	TypeContact  = "contact"
	TypeLead     = "lead"
	TypeContract = "contract"
	TypeDocument = "document"
)

// Types are the hit types in the order of the types parameter's default.
var Types = []string{TypeContact, TypeLead, TypeContract, TypeDocument}

// maxWords bounds the words the query is matched by (each a LIKE condition); the rest still
// counts in the score. Eight words is more than any name, number or phrase a person types.
const maxWords = 8

// Query is one search.
type Query struct {
	Q     string   // trimmed, 2-200 characters
	Types []string // of Types, at least one
	Limit int      // 1-50
	Lang  string   // "de" or "en": the contract type's label in a contract's subtitle
}

// Hit is one result of a search.
type Hit struct {
	Type      string     `json:"type"`
	ID        uuid.UUID  `json:"id"`
	Title     string     `json:"title"`
	Subtitle  *string    `json:"subtitle"`
	ContactID *uuid.UUID `json:"contactId"`
	Highlight string     `json:"highlight"`
	Score     float64    `json:"score"`
}

// Service runs the search.
type Service struct {
	// bounded caches Service.bounded once known.
	mu                   sync.Mutex
	boundedKnown, bounds bool
}

// NewService builds the service.
func NewService() *Service { return &Service{} }

// bounded reports whether the branches can be bounded (sqlBounded: a superuser ran migration
// 20261212100000). Asked once per service (migrations run before the server starts); a failed
// query is asked again.
func (s *Service) bounded(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.boundedKnown {
		if err := tenancy.QueryRow(ctx, sqlBounded, nil, &s.bounds); err != nil {
			return false, fmt.Errorf("search: %w", err)
		}
		s.boundedKnown = true
	}
	return s.bounds, nil
}

// Search returns the best q.Limit hits over q.Types the credential may see, best first.
func (s *Service) Search(ctx context.Context, q Query) ([]Hit, error) {
	types := searchedTypes(q)
	if len(types) == 0 {
		return []Hit{}, nil
	}
	words := queryWords(q.Q)
	if len(types) == 1 && types[0] == TypeContract {
		words = nil // the contracts' branch matches the policy key, not words: no parameters
	}
	args := []any{q.Q, q.Limit, umlautVariant(q.Q)}
	for _, w := range words {
		args = append(args, w)
	}
	sh := shape{words: len(words)}
	if owners, ok := tenancy.VisibleOwners(ctx); ok {
		sh.restricted = true
		args = append(args, uuidArray(owners))
	}
	bounded, err := s.bounded(ctx)
	if err != nil {
		return nil, err
	}
	sh.bounded = bounded
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, err
	}
	// Planned for its values: the LIKE patterns must be constants for the trigram indexes.
	ctx = tenancy.CustomPlans(ctx)
	rows, err := tenancy.Client(ctx).QueryContext(ctx, statement(types, sh), args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	terms := foldedTerms(words)
	hits := []Hit{}
	for rows.Next() {
		var (
			h        Hit
			subtitle sql.NullString
			contact  uuid.NullUUID
			hl       string
			extra    sql.NullString
			passage  sql.NullString
		)
		if err := rows.Scan(&h.Type, &h.ID, &h.Title, &subtitle, &contact, &h.Score, &hl, &extra, &passage); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if subtitle.Valid {
			h.Subtitle = &subtitle.String
		}
		if contact.Valid {
			h.ContactID = &contact.UUID
		}
		if h.Type == TypeContract {
			h.Subtitle = contractSubtitle(h.Subtitle, extra.String, q.Lang)
		}
		h.Highlight = highlightOf(h.Type, strings.Split(hl, "\x1f"), passage, terms)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// searchedTypes are the types of q searched: contracts only for a query with a digit. Policy
// numbers have digits; a name has none and would otherwise test its letters against every
// contract's key (at a million contracts, a common syllable matches thousands of them).
func searchedTypes(q Query) []string {
	if hasDigit(q.Q) {
		return q.Types
	}
	var out []string
	for _, t := range q.Types {
		if t != TypeContract {
			out = append(out, t)
		}
	}
	return out
}

// hasDigit reports whether s holds a decimal digit (any script: search_policy_key keeps
// [[:alnum:]]).
func hasDigit(s string) bool {
	return strings.IndexFunc(s, unicode.IsDigit) >= 0
}

// uuidArray is ids as a PostgreSQL array literal (a uuid[] parameter).
func uuidArray(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "{" + strings.Join(s, ",") + "}"
}

// contractSubtitle is "insurer · contract type" (the Sparte's label in lang).
func contractSubtitle(insurer *string, code, lang string) *string {
	label := code
	if sp, ok := gdv.Sparte(code); ok {
		label = sp.De
		if lang == "en" && sp.En != "" {
			label = sp.En
		}
	}
	parts := []string{}
	if insurer != nil && *insurer != "" {
		parts = append(parts, *insurer)
	}
	if label != "" {
		parts = append(parts, label)
	}
	s := strings.Join(parts, " · ")
	return &s
}

// queryWords are the words the query is matched by: split at white space, words of one
// character dropped (they match nearly everything and give no trigram) unless nothing else is
// left, then the whole query is the one word; at most maxWords.
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(q, unicode.IsSpace) {
		if len([]rune(w)) >= 2 {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		out = []string{q}
	}
	if len(out) > maxWords {
		out = out[:maxWords]
	}
	return out
}

// umlautVariant is q with written-out umlauts read back as plain vowels ("Mueller" ->
// "Muller", "elementarschaeden" -> "elementarschaden"): the German stemmer reads "Müller" as
// "mull", and a document's text is searched as written (search_document_tsv).
func umlautVariant(q string) string {
	return strings.NewReplacer("ue", "u", "ae", "a", "oe", "o", "Ue", "U", "Ae", "A", "Oe", "O",
		"UE", "U", "AE", "A", "OE", "O").Replace(q)
}
