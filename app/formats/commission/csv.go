package commission

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/formats/portfoliocsv"
)

// The entry fields a CSV mapping names (Options.Mapping keys).
const (
	FieldPolicyNumber = "policyNumber"
	FieldAmount       = "amount"
	FieldBookedOn     = "bookedOn"
	FieldType         = "type"
	FieldDescription  = "description"
	FieldVUNumber     = "vuNumber"
)

// MappingFields are the keys Options.Mapping may have; the first three are required.
var mappingFields = []string{FieldPolicyNumber, FieldAmount, FieldBookedOn, FieldType, FieldDescription, FieldVUNumber}

// MappingFields returns the keys Options.Mapping may have, the required ones first.
func MappingFields() []string { return slices.Clone(mappingFields) }

// ValidateMapping checks a CSV mapping before a file is read (the upload can answer 422 for
// it): every key an entry field, no column named twice.
func ValidateMapping(m map[string]string) error {
	used := map[string]string{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(mappingFields, k) {
			return fmt.Errorf("mapping: unknown field %q (fields: %s)", k, strings.Join(mappingFields, ", "))
		}
		col := headerKey(m[k])
		if col == "" {
			continue
		}
		if other, dup := used[col]; dup {
			return fmt.Errorf("mapping: column %q is mapped to both %s and %s", m[k], other, k)
		}
		used[col] = k
	}
	return nil
}

// headerSynonyms are the column headers a field is taken from when the mapping does not name
// its column, best first, as headerKey folds them.
var headerSynonyms = map[string][]string{
	FieldPolicyNumber: {"versicherungsscheinnr", "versicherungsscheinnummer", "vsnr", "vertragsnummer", "vertragsnr",
		"policennummer", "policennr", "polizzennummer", "versicherungsnummer", "policynumber", "policyno", "contractnumber"},
	FieldAmount: {"provisionsbetrag", "courtagebetrag", "betrag", "provision", "courtage", "buchungsbetrag",
		"amount", "commission"},
	FieldBookedOn:    {"buchungsdatum", "buchungstag", "datum", "valuta", "bookedon", "bookingdate", "date"},
	FieldType:        {"buchungsart", "art", "provisionsart", "type", "bookingtype"},
	FieldDescription: {"buchungstext", "text", "beschreibung", "verwendungszweck", "bemerkung", "description"},
	FieldVUNumber:    {"vunr", "vunummer", "gesellschaftsnr", "vunumber"},
}

// headerKey folds a header for comparison: lower case, umlauts spelt out, only letters and
// digits ("VU-Nr." and "vu nr" are the same column).
func headerKey(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss").Replace(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sniffComma finds the separator: an Excel "sep=X" first line names it (and is skipped);
// otherwise the most frequent of ';', tab and ',' outside quotes in the first line, ';' when
// none or tied (the spec's separator).
func sniffComma(br *bufio.Reader) (comma rune, skipped int) {
	w, _ := br.Peek(64 << 10)
	line := w
	if i := bytes.IndexAny(w, "\r\n"); i >= 0 {
		line = w[:i]
	}
	if low := bytes.ToLower(line); bytes.HasPrefix(low, []byte("sep=")) && len(line) == 5 && strings.ContainsRune(";\t,|", rune(line[4])) {
		comma = rune(line[4])
		n := len(line)
		for n < len(w) && (w[n] == '\r' || w[n] == '\n') && n-len(line) < 2 {
			if w[n] == '\n' {
				n++
				break
			}
			n++
		}
		_, _ = br.Discard(n)
		return comma, 1
	}
	counts := map[rune]int{}
	quoted := false
	for _, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ';' || c == '\t' || c == ','):
			counts[rune(c)]++
		}
	}
	comma = ';'
	for _, c := range []rune{'\t', ','} {
		if counts[c] > counts[comma] {
			comma = c
		}
	}
	return comma, 0
}

// readCSV reads a CSV statement: a header row, then one booking per row.
func readCSV(src io.Reader, st *state) error {
	if st.opts.Mapping != nil {
		if err := ValidateMapping(st.opts.Mapping); err != nil {
			return unreadable("%s", err.Error())
		}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	if head, _ := br.Peek(3); bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	comma, skipped := sniffComma(br)
	text, _ := portfoliocsv.Decoded(br, gdv.EncodingAuto)
	lim := &portfoliocsv.RecordLimit{R: text}
	cr := csv.NewReader(lim)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true

	header, err := cr.Read()
	lim.Reset()
	switch {
	case errors.Is(err, io.EOF):
		return unreadable("the file is empty: a CSV statement needs a header row")
	case err != nil:
		return unreadable("the header row is not CSV: %v", err)
	}
	header = slices.Clone(header)
	cols, err := mapColumns(header, st)
	if err != nil {
		return err
	}
	for {
		rec, err := cr.Read()
		lim.Reset()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, portfoliocsv.ErrRecordTooLong):
			return unreadable("a CSV record longer than 1 MB: not a statement")
		case err != nil:
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				st.issue(pe.StartLine+skipped, SeverityError, "csv_syntax", "line not readable as CSV: "+pe.Err.Error())
				continue
			}
			return fmt.Errorf("commission: read CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if err := csvRow(rec, line+skipped, cols, st); err != nil {
			return err
		}
	}
}

// mapColumns finds each field's column: the mapping's, else one suggested from the header
// (the Issue "mapping_suggested" says which). A mapped column the header lacks, or a required
// field without a column, makes the file unreadable: no row could be read.
func mapColumns(header []string, st *state) (map[string]int, error) {
	idx := map[string]int{}
	for i, h := range header {
		if k := headerKey(h); k != "" {
			if _, dup := idx[k]; !dup {
				idx[k] = i
			}
		}
	}
	cols := map[string]int{}
	taken := map[int]bool{}
	for _, f := range mappingFields {
		col, named := st.opts.Mapping[f]
		if !named {
			continue
		}
		if strings.TrimSpace(col) == "" { // mapped to no column on purpose
			cols[f] = -1
			continue
		}
		i, ok := idx[headerKey(col)]
		if !ok {
			return nil, unreadable("the header has no column %q mapped to %s (header: %s)", col, f, quoteList(header))
		}
		cols[f] = i
		taken[i] = true
	}
	var suggested []string
	for _, f := range mappingFields {
		if _, done := cols[f]; done {
			continue
		}
		for _, syn := range headerSynonyms[f] {
			if i, ok := idx[syn]; ok && !taken[i] {
				cols[f] = i
				taken[i] = true
				suggested = append(suggested, fmt.Sprintf("%s from %q", f, header[i]))
				break
			}
		}
	}
	var missing []string
	for _, f := range mappingFields[:3] {
		if i, ok := cols[f]; !ok || i < 0 {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, unreadable("no column for %s (header: %s); give a mapping", strings.Join(missing, ", "), quoteList(header))
	}
	if len(suggested) > 0 {
		st.issue(1, SeverityWarning, "mapping_suggested", "columns taken by their header: "+strings.Join(suggested, ", "))
	}
	for f, i := range cols {
		if i < 0 {
			delete(cols, f)
		}
	}
	return cols, nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// csvRow reads one booking; a row that lacks a required value is skipped with an error
// Issue, a doubtful one is read with a warning.
func csvRow(rec []string, line int, cols map[string]int, st *state) error {
	cell := func(f string) string {
		i, ok := cols[f]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	blank := true
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			blank = false
			break
		}
	}
	if blank { // ";;;;" rows of spreadsheet exports
		return nil
	}
	e := Entry{Line: line, PolicyNumber: cell(FieldPolicyNumber), VUNumber: cell(FieldVUNumber),
		Description: cell(FieldDescription), Code: cell(FieldType)}
	if e.PolicyNumber == "" {
		st.issue(line, SeverityError, "policy_number_missing", "no policy number; row skipped")
		return nil
	}
	amount, ok := parseAmount(cell(FieldAmount))
	if !ok {
		st.issue(line, SeverityError, "amount_invalid", fmt.Sprintf("amount %q is no amount like 1.234,56; row skipped", cell(FieldAmount)))
		return nil
	}
	e.Amount = amount
	booked, ok := parseDate(cell(FieldBookedOn))
	if !ok {
		st.issue(line, SeverityError, "date_invalid", fmt.Sprintf("booking date %q is no date like 31.12.2024; row skipped", cell(FieldBookedOn)))
		return nil
	}
	e.BookedOn = booked
	if t, ok := typeOfText(e.Code); ok {
		e.Type = t
	} else {
		if e.Code != "" {
			st.issue(line, SeverityWarning, "type_unknown", fmt.Sprintf("booking kind %q unknown; typed by the amount's sign", e.Code))
		}
		e.Type = typeBySign(amount)
	}
	if e.Type == TypeCancellation && amount.Sign() > 0 {
		st.issue(line, SeverityWarning, "sign_unexpected", "a cancellation with a positive amount: read as written")
	}
	return st.emit(e)
}
