package search

import (
	"database/sql"
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Highlights mark the matched words with « and » (the German quotation marks, which no
// name, number or e-mail address holds, so a client can split on them and needs no HTML
// escaping): "Anna «Müller»", "«mueller@example.de»". A word is marked whole when its folded form
// contains a folded query word. The text shown is the stored one, never the folded one.
const (
	markOpen  = "«"
	markClose = "»"
)

// fold is search_fold (migration 20261210100100) in Go, for marking only: lower case, umlauts
// written out, other accents removed. A difference to the SQL (a rare letter unaccent maps
// otherwise) can cost a mark, never a hit: the database decides what matches.
func fold(s string) string {
	s = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss").Replace(strings.ToLower(s))
	out, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), s)
	if err != nil {
		return s
	}
	return out
}

// foldedTerms are the query words folded, as the database matched them.
func foldedTerms(words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if f := fold(strings.TrimSpace(w)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// highlightOf is the highlight of a hit: a document found by its text gets the passage the
// database cut around the matched words (ts_headline, marked alike); any other hit its first
// text (title first, then e-mail, company, city, …) in which a word matches, marked; the title
// unmarked when none does (a contract found by its policy number typed otherwise: the whole
// number is then the match).
func highlightOf(typ string, texts []string, passage sql.NullString, terms []string) string {
	if passage.Valid && passage.String != "" {
		return passage.String
	}
	for _, t := range texts {
		if m, ok := mark(t, terms); ok {
			return m
		}
	}
	if len(texts) == 0 {
		return ""
	}
	if typ == TypeContract {
		return markOpen + texts[0] + markClose
	}
	return texts[0]
}

// mark wraps each white-space separated word of s whose folded form contains a term; ok
// reports whether any was.
func mark(s string, terms []string) (string, bool) {
	var b strings.Builder
	marked := false
	rest := s
	for rest != "" {
		// copy the white space, then one word
		i := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsSpace(r) })
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i:]
		j := strings.IndexFunc(rest, unicode.IsSpace)
		if j < 0 {
			j = len(rest)
		}
		word := rest[:j]
		rest = rest[j:]
		if matches(fold(word), terms) {
			b.WriteString(markOpen + word + markClose)
			marked = true
		} else {
			b.WriteString(word)
		}
	}
	return b.String(), marked
}

func matches(folded string, terms []string) bool {
	for _, t := range terms {
		if strings.Contains(folded, t) {
			return true
		}
	}
	return false
}
