package search

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
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
type Service struct{}

// NewService builds the service.
func NewService() *Service { return &Service{} }

// Search returns the best q.Limit hits over q.Types the credential may see, best first.
func (s *Service) Search(ctx context.Context, q Query) ([]Hit, error) {
	words := queryWords(q.Q)
	if len(q.Types) == 1 && q.Types[0] == TypeContract {
		words = nil // the contracts' branch matches the policy key, not words: no parameters
	}
	args := []any{q.Q, q.Limit, umlautVariant(q.Q)}
	for _, w := range words {
		args = append(args, w)
	}
	if err := tenancy.WithoutJIT(ctx); err != nil {
		return nil, err
	}
	// Planned for its values: the LIKE patterns must be constants for the trigram indexes.
	ctx = tenancy.CustomPlans(ctx)
	rows, err := tenancy.Client(ctx).QueryContext(ctx, statement(q.Types, len(words)), args...)
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
