// Package commission reads insurer commission statements (issue 24): CSV with a column
// mapping, GDV VU-Vermittler record types 0400/0410/0430 (Inkasso) and BiPRO Abrechnung XML
// (the spec's format name bipro_430_5). No HTTP, no database: entries are streamed to a
// callback, so a 50,000-entry statement is read in bounded memory.
package commission

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Formats of Read, the spec's names.
const (
	FormatCSV   = "csv"
	FormatGDV   = "gdv_0400"
	FormatBiPRO = "bipro_430_5"
)

// Entry types (ent/schema CommissionEntryTypes).
const (
	TypeCommission   = "commission"
	TypeCancellation = "cancellation"
	TypeCorrection   = "correction"
	TypePremium      = "premium"
	TypeOther        = "other"
)

// Entry is one booking of a statement.
type Entry struct {
	Line         int    // the record or row number in the file (1-based)
	PolicyNumber string // as written (trimmed)
	VUNumber     string // the insurer's GDV VU number when the file names one per entry
	Type         string // one of the Type constants
	Code         string // the source's own kind (GDV Sollstellungsart, BiPRO Buchungsart)
	Amount       schematype.Money
	BookedOn     time.Time // a date (UTC midnight)
	Description  string
}

// Issue is a finding that did not stop the read: a line skipped or read with a warning.
type Issue = schematype.CommissionIssue

// Summary is what the whole file said.
type Summary struct {
	VUNumber             string // the insurer of the file (GDV Vorsatz, BiPRO sender), "" when none
	PeriodFrom, PeriodTo *time.Time
	Entries              int
	Issues               []Issue
}

// Options of Read.
type Options struct {
	// Mapping maps the entry fields (policyNumber, amount, bookedOn, type, description,
	// vuNumber) to the CSV's column headers (csv only; decide defaults for German headers).
	Mapping map[string]string
	// MaxIssues bounds Summary.Issues (default 1000); the rest are counted only.
	MaxIssues int
}

// ErrUnreadable is returned (wrapped) when the file is not of the format at all: the statement
// fails with its message; anything less is an Issue.
var ErrUnreadable = errors.New("commission: the file cannot be read as the format")

// Read reads a statement of format from r and calls each for every entry in file order; an
// error of each stops the read and is returned.
func Read(format string, r io.Reader, opts Options, each func(Entry) error) (Summary, error) {
	if opts.MaxIssues <= 0 {
		opts.MaxIssues = 1000
	}
	st := &state{opts: opts, each: each}
	var err error
	switch format {
	case FormatCSV:
		err = readCSV(r, st)
	case FormatGDV:
		err = readGDV(r, st)
	case FormatBiPRO:
		err = readBiPRO(r, st)
	default:
		return Summary{}, fmt.Errorf("%w: unknown format %q", ErrUnreadable, format)
	}
	st.sum.Entries = st.entries
	if st.dropped > 0 {
		st.sum.Issues = append(st.sum.Issues, Issue{Severity: SeverityWarning, Code: "issues_suppressed",
			Message: fmt.Sprintf("%d further issues not listed", st.dropped)})
	}
	return st.sum, err
}

// Severities of an Issue.
const (
	SeverityWarning = "warning" // the entry was read; something about it is doubtful
	SeverityError   = "error"   // the line was skipped
)

// state is one Read: the summary so far and the callback.
type state struct {
	opts    Options
	each    func(Entry) error
	sum     Summary
	entries int
	dropped int
}

// emit delivers an entry; an error of the callback stops the read.
func (st *state) emit(e Entry) error {
	if err := st.each(e); err != nil {
		return err
	}
	st.entries++
	return nil
}

// issue records a finding; beyond Options.MaxIssues it is only counted (a broken 50,000-line
// file must not hold 50,000 messages).
func (st *state) issue(line int, severity, code, msg string) {
	if len(st.sum.Issues) >= st.opts.MaxIssues {
		st.dropped++
		return
	}
	st.sum.Issues = append(st.sum.Issues, Issue{Line: line, Severity: severity, Code: code, Message: msg})
}

// unreadable wraps ErrUnreadable with what was wrong.
func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnreadable, fmt.Sprintf(format, args...))
}
