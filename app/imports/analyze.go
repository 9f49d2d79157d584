package imports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contactimport"
	"github.com/brokerdesk/brokerdesk/ent/contactimportrow"
)

// analyze reads a queued import's file and records every row with what it found, unless the
// import has moved on (a job run twice).
func (m *Module) analyze(ctx context.Context, id uuid.UUID) error {
	var im *ent.ContactImport
	err := m.withTx(ctx, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		if im, err = tx.ContactImport.Get(ctx, id); err != nil {
			return err
		}
		if im.Status == contactimport.StatusQueued {
			// Seen by clients polling the import; a crash leaves it analyzing, and the next
			// attempt reads the file again.
			im, err = tx.ContactImport.UpdateOne(im).SetStatus(contactimport.StatusAnalyzing).Save(ctx)
		}
		return err
	})
	if err != nil || im.Status != contactimport.StatusAnalyzing {
		return err
	}
	return m.withTx(ctx, func(ctx context.Context, tx *ent.Tx) error {
		// The row lock makes a second run of the same import wait and then find it done.
		im, err := tx.ContactImport.Query().Where(contactimport.ID(id)).ForUpdate().Only(ctx)
		if err != nil || im.Status != contactimport.StatusAnalyzing {
			return err
		}
		return m.analyzeFile(ctx, tx, im)
	})
}

// analysis collects the rows of one file into batches and finds their duplicates.
type analysis struct {
	m       *Module
	ctx     context.Context
	tx      *ent.Tx
	im      *ent.ContactImport
	header  []string
	mapping map[string]string
	// firstByKey is the first row of each duplicate key in the file (e-mail key of a private
	// contact, company key of a business one).
	firstByKey map[string]int
	// companies maps the company key of every business contact the creator sees to the
	// oldest such contact (read once: company names are compared in Go, identity.CompanyKey).
	companies map[string]uuid.UUID
	batch     []*pendingRow
	counts    map[string]int
	rows      int
}

// pendingRow is a row read and validated, waiting for its batch's duplicate lookup.
type pendingRow struct {
	row      int
	cells    map[string]string
	errors   []string
	key      string // the duplicate key; "" when the row has none or is invalid
	dupRow   *int
	existing *uuid.UUID
}

// analyzeFile reads the file and writes its rows in batches, then the import's result.
func (m *Module) analyzeFile(ctx context.Context, tx *ent.Tx, im *ent.ContactImport) error {
	r, err := m.d.Bucket.NewReader(ctx, im.BlobKey, nil)
	if err != nil {
		return fmt.Errorf("open import file: %w", err)
	}
	defer r.Close()
	t, err := openTable(string(im.Format), r)
	if err != nil {
		return err
	}
	defer t.Close()
	suggested := Suggest(t.Header, string(im.ContactType))
	a := &analysis{m: m, ctx: ctx, tx: tx, im: im, header: t.Header, mapping: im.Mapping, firstByKey: map[string]int{},
		counts: map[string]int{}}
	if a.mapping == nil {
		a.mapping = suggested
	}
	if im.ContactType == contactimport.ContactTypeBusiness {
		if err := a.loadCompanies(); err != nil {
			return err
		}
	}
	for {
		cells, row, err := t.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if blank(cells) {
			continue
		}
		if a.rows++; a.rows > a.m.d.MaxRows {
			return unreadable("the file has more than %d data rows: split it into files of at most %d rows",
				a.m.d.MaxRows, a.m.d.MaxRows)
		}
		if err := a.add(cells, row); err != nil {
			return err
		}
	}
	if err := a.flush(); err != nil {
		return err
	}
	_, err = tx.ContactImport.UpdateOne(im).SetStatus(contactimport.StatusAnalyzed).SetEncoding(t.Encoding).
		SetDelimiter(t.Delimiter).SetHeaders(t.Header).SetSuggestedMapping(suggested).SetRowCount(a.rows).
		SetCounts(a.counts).SetError("").SetAnalyzedAt(m.d.Now()).Save(ctx)
	if err != nil {
		return fmt.Errorf("record contact import: %w", err)
	}
	return nil
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// add validates one row as POST /contacts would and finds a duplicate earlier in the file.
func (a *analysis) add(raw []string, row int) error {
	p := &pendingRow{row: row, cells: make(map[string]string, len(a.header))}
	for i, h := range a.header {
		if i < len(raw) {
			p.cells[h] = strings.ReplaceAll(raw[i], "\x00", "")
		}
	}
	// Ragged rows: a CSV row must have the header's cells (trailing empty ones beyond it are
	// what spreadsheets export); an xlsx row omits its trailing empty cells by format.
	extra := 0
	for _, c := range raw[min(len(raw), len(a.header)):] {
		if strings.TrimSpace(c) != "" {
			extra++
		}
	}
	switch {
	case extra > 0:
		p.errors = append(p.errors, fmt.Sprintf("the row has %d cells, the header %d columns: values beyond the last column", len(raw), len(a.header)))
	case a.im.Format == contactimport.FormatCsv && len(raw) < len(a.header):
		p.errors = append(p.errors, fmt.Sprintf("the row has %d cells, the header %d columns: a delimiter is missing or a quote is not closed", len(raw), len(a.header)))
	}
	for _, h := range a.header {
		if utf8.RuneCountInString(p.cells[h]) > MaxCell {
			p.errors = append(p.errors, fmt.Sprintf("%s: the cell has more than %d characters", h, MaxCell))
		}
	}
	typ := string(a.im.ContactType)
	d, phoneCols := rowDoc(p.cells, a.mapping, typ, a.m.d.Now())
	d.Tags = a.im.Tags
	if err := a.m.d.Contacts.Check(d); err != nil {
		p.errors = append(p.errors, rowErrors(err, a.mapping, phoneCols)...)
	}
	if len(p.errors) == 0 {
		p.key = duplicateKey(typ, d)
		if p.key != "" {
			if first, ok := a.firstByKey[p.key]; ok {
				p.dupRow = &first
			} else {
				a.firstByKey[p.key] = row
			}
		}
	}
	a.batch = append(a.batch, p)
	if len(a.batch) >= a.m.d.BatchSize {
		return a.flush()
	}
	return nil
}

// duplicateKey is what finds a row's duplicates: the e-mail of a private contact, the company
// name of a business one, normalised as the contacts' own matching does.
func duplicateKey(typ string, d contacts.Doc) string {
	if typ == contacts.TypeBusiness {
		return identity.CompanyKey(d.CompanyName())
	}
	if d.Email == nil {
		return ""
	}
	return identity.EmailKey(*d.Email)
}

// loadCompanies reads the company keys of the business contacts the creator sees.
func (a *analysis) loadCompanies() error {
	a.companies = map[string]uuid.UUID{}
	var found []struct {
		ID          uuid.UUID `json:"id"`
		CompanyName string    `json:"company_name"`
	}
	err := a.tx.Contact.Query().Where(contact.TypeEQ(contact.TypeBusiness)).
		Order(ent.Asc(contact.FieldCreatedAt), ent.Asc(contact.FieldID)).
		Select(contact.FieldID, contact.FieldCompanyName).Scan(a.ctx, &found)
	if err != nil {
		return fmt.Errorf("read business contacts: %w", err)
	}
	for _, c := range found {
		if k := identity.CompanyKey(c.CompanyName); k != "" {
			if _, ok := a.companies[k]; !ok {
				a.companies[k] = c.ID
			}
		}
	}
	return nil
}

// flush finds the batch's duplicates among the contacts the creator sees and writes its rows.
func (a *analysis) flush() error {
	if len(a.batch) == 0 {
		return nil
	}
	if a.im.ContactType == contactimport.ContactTypePrivate {
		var keys []string
		for _, p := range a.batch {
			if p.key != "" && p.dupRow == nil {
				keys = append(keys, p.key)
			}
		}
		if len(keys) > 0 {
			var found []struct {
				ID       uuid.UUID `json:"id"`
				EmailKey string    `json:"email_key"`
			}
			err := a.tx.Contact.Query().Where(contact.EmailKeyIn(keys...)).
				Order(ent.Asc(contact.FieldCreatedAt), ent.Asc(contact.FieldID)).
				Select(contact.FieldID, contact.FieldEmailKey).Scan(a.ctx, &found)
			if err != nil {
				return fmt.Errorf("match contacts by e-mail: %w", err)
			}
			byKey := map[string]uuid.UUID{}
			for _, c := range found {
				if _, ok := byKey[c.EmailKey]; !ok {
					byKey[c.EmailKey] = c.ID
				}
			}
			for _, p := range a.batch {
				if id, ok := byKey[p.key]; ok && p.dupRow == nil {
					p.existing = &id
				}
			}
		}
	} else {
		for _, p := range a.batch {
			if id, ok := a.companies[p.key]; ok && p.key != "" && p.dupRow == nil {
				p.existing = &id
			}
		}
	}
	creates := make([]*ent.ContactImportRowCreate, 0, len(a.batch))
	for _, p := range a.batch {
		analysis := contactimportrow.AnalysisValid
		switch {
		case len(p.errors) > 0:
			analysis = contactimportrow.AnalysisInvalid
		case p.dupRow != nil || p.existing != nil:
			analysis = contactimportrow.AnalysisDuplicate
		}
		a.counts[analysisKey+string(analysis)]++
		errs := p.errors
		if errs == nil {
			errs = []string{}
		}
		creates = append(creates, a.tx.ContactImportRow.Create().SetImportID(a.im.ID).SetNillableCreatorID(a.im.CreatorID).
			SetRow(p.row).SetCells(p.cells).SetAnalysis(analysis).SetNillableContactID(p.existing).
			SetNillableDuplicateRow(p.dupRow).SetErrors(errs))
	}
	if err := a.tx.ContactImportRow.CreateBulk(creates...).Exec(a.ctx); err != nil {
		return fmt.Errorf("store import rows: %w", err)
	}
	a.batch = a.batch[:0]
	return nil
}
