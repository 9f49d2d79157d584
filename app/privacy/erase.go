package privacy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/privacyrequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// EraseArgs name the erasure request a job works on: ids only.
type EraseArgs struct {
	CompanyID uuid.UUID `json:"companyId"`
	RequestID uuid.UUID `json:"requestId"`
}

// Kind is the job kind.
func (EraseArgs) Kind() string { return "privacy_erasure" }

// InsertOpts: the portfolio queue, as exports.
func (EraseArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueuePortfolio, MaxAttempts: exportAttempts}
}

// retainedPrefix is where the files of retained records are kept: <prefix>/<company>/<request>/….
// Their keys are derived from the request and the record, so a retried run writes the same
// blobs again instead of new ones.
const retainedPrefix = "retained"

type eraseWorker struct {
	river.WorkerDefaults[EraseArgs]
	m *Module
}

// Timeout bounds one run.
func (w *eraseWorker) Timeout(*river.Job[EraseArgs]) time.Duration { return exportTimeout }

// Work runs one attempt of the erasure; an import still reading or committing a file, or a
// mailbox that could not be brought up to date (mail.go), snoozes it (river does not count a
// snooze as an attempt).
func (w *eraseWorker) Work(ctx context.Context, job *river.Job[EraseArgs]) error {
	err := w.m.Erase(ctx, job.Args.CompanyID, job.Args.RequestID, job.Attempt, job.MaxAttempts)
	if errors.Is(err, ErrImportsRunning) {
		return river.JobSnooze(importWait)
	}
	if errors.Is(err, ErrMailboxesBehind) {
		return river.JobSnooze(mailWait)
	}
	return err
}

// ErrImportsRunning: an import of the company is queued, being analysed or being committed; the
// erasure waits until it has ended (docs/decisions/privacy.md "Imports under way").
var ErrImportsRunning = errors.New("an import of the company is under way")

// importWait is how long an erasure waits before it looks at the imports under way again: an
// analysis or commit takes seconds to minutes.
const importWait = time.Minute

// Erase runs attempt (of max) of the erasure job of a request, as the worker does; the last
// failed attempt fails the request (it can be made again) and deletes the copies it made. Tests
// drive attempts with it (Deps.BeforeEraseCommit, Deps.AfterEraseCommit).
func (m *Module) Erase(ctx context.Context, company, request uuid.UUID, attempt, max int) error {
	err := m.erase(ctx, company, request)
	if err != nil && !errors.Is(err, ErrImportsRunning) && !errors.Is(err, ErrMailboxesBehind) && attempt >= max {
		// Only a request this call failed has copies no record names: one that completed (the
		// last attempt failed after the commit, deleting files) has retained records with them.
		if m.fail(ctx, company, request,
			fmt.Sprintf("the erasure failed %d times, the last time at %s", attempt, m.now().Format(time.RFC3339))) {
			m.dropCopies(ctx, company, request)
		}
	}
	return err
}

// dropCopies deletes the retained files a failed erasure copied (no retained record names them,
// and no sweep looks under retained/ for orphans).
func (m *Module) dropCopies(ctx context.Context, company, request uuid.UUID) {
	ctx = context.WithoutCancel(ctx)
	it := m.d.Bucket.List(&blob.ListOptions{Prefix: fmt.Sprintf("%s/%s/%s/", retainedPrefix, company, request)})
	for {
		obj, err := it.Next(ctx)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				m.d.Log.Warn().Err(err).Str("privacy_request_id", request.String()).Msg("erasure: list copies")
			}
			return
		}
		if err := m.d.Bucket.Delete(ctx, obj.Key); err != nil {
			m.d.Log.Warn().Err(err).Str("privacy_request_id", request.String()).Msg("erasure: delete copy")
		}
	}
}

// retained is one record to keep, blocked, in retained_records.
type retained struct {
	typ   string
	id    uuid.UUID
	rule  rule
	data  map[string]any
	files []fileCopy
}

// fileCopy is a blob of a retained record copied under the retained prefix.
type fileCopy struct{ from, to string }

// erasurePlan is what the erasure found before it changes anything.
type erasurePlan struct {
	contact *contacts.Contact // nil: deleted before the job ran (what is left of it is still erased)
	email   string            // lower case; "" when none
	keep    []retained
	// blanked are the ids of rows kept for others without the person's data (commission
	// entries: commissions.go); remove treats them as the ids of deleted resources.
	blanked []string
}

// erase runs the erasure of a request in three idempotent steps: (1) read what must be kept
// and copy its files under the retained prefix (same keys on every run); (2) in one
// transaction, write the retained records, delete the contact and everything of it, replace
// the personal data in the event feed, the webhook log and stored idempotent answers, record
// the blobs the deleted rows named (erasedFiles) and complete the request; (3) after the
// commit, delete those blobs, then their record. A run that dies in (1) or (2) leaves nothing
// changed and the next attempt starts over; one that dies in (3) leaves the record, which the
// next attempt (the request is completed: only the files are left) or the hourly sweep finishes.
func (m *Module) erase(ctx context.Context, company, id uuid.UUID) error {
	req, err := m.claim(ctx, company, id)
	if err != nil {
		return err
	}
	if req == nil {
		// Ended: a run that died after its commit may have left files to delete.
		return m.dropErasedFiles(ctx, company, id)
	}
	if err := m.awaitImports(ctx, company); err != nil {
		return err
	}
	mail, err := m.syncMailboxes(ctx, company, req)
	if err != nil {
		return err
	}
	var plan *erasurePlan
	if err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		plan, err = m.plan(ctx, company, req)
		return err
	}); err != nil {
		return err
	}
	for _, r := range plan.keep {
		for _, f := range r.files {
			if err := m.copyBlob(ctx, f); err != nil {
				return err
			}
		}
	}
	if m.d.BeforeEraseCommit != nil {
		if err := m.d.BeforeEraseCommit(id); err != nil {
			return err
		}
	}
	err = tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		cur, err := db.PrivacyRequest.Query().Where(privacyrequest.ID(id)).ForUpdate().Only(ctx)
		if err != nil {
			return err
		}
		if cur.Status != privacyrequest.StatusProcessing {
			return nil // another run finished it
		}
		summary := maps.Clone(mail)
		if err := m.writeRetained(ctx, company, req, plan, summary); err != nil {
			return err
		}
		// Before the contact's deletion unmatches them (commissions.go).
		if err := m.retainCommissions(ctx, company, req, plan, summary); err != nil {
			return err
		}
		drop, err := m.remove(ctx, req.ID, req.ContactID, plan, summary)
		if err != nil {
			return err
		}
		if err := m.recordErasedFiles(ctx, company, req, drop); err != nil {
			return err
		}
		now := m.now()
		return db.PrivacyRequest.UpdateOne(cur).SetStatus(privacyrequest.StatusCompleted).SetSummary(summary).
			SetCompletedAt(now).SetUpdatedAt(now).Exec(ctx)
	})
	if err != nil {
		return err
	}
	if m.d.AfterEraseCommit != nil {
		if err := m.d.AfterEraseCommit(id); err != nil {
			return err
		}
	}
	return m.dropErasedFiles(ctx, company, id)
}

// erasedFiles is the record type of the files an erasure's commit left to delete: a
// retained_records row with no retention (retain_until has passed), so a crash between the
// commit and the deletes leaves a record the next attempt (dropErasedFiles) or the hourly sweep
// finds, instead of files no row names.
const erasedFiles = "erased_files"

// recordErasedFiles records the blobs of the rows the erasure deleted, in its transaction.
func (m *Module) recordErasedFiles(ctx context.Context, company uuid.UUID, req *ent.PrivacyRequest, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	files, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	now := m.now()
	if _, err := tenancy.Client(ctx).ExecContext(ctx, `INSERT INTO retained_records (id, company_id, request_id,
		contact_id, record_type, record_id, basis, data, blob_keys, retain_until, created_at)
		VALUES ($1, $2, $3, $4, $5, $3, $6, '{}', $7, $8, $9)`, uuid.Must(uuid.NewV7()), company, req.ID, req.ContactID,
		erasedFiles, "keine Aufbewahrung: Dateien der gelöschten Datensätze, nach der Löschung zu entfernen",
		files, now.AddDate(0, 0, -1).Format(time.DateOnly), now); err != nil {
		return fmt.Errorf("record erased files: %w", err)
	}
	return nil
}

// dropErasedFiles deletes the files the request's erasure recorded, then the record.
func (m *Module) dropErasedFiles(ctx context.Context, company, request uuid.UUID) error {
	return tenancy.CompanyTx(context.WithoutCancel(ctx), m.d.DB, company, func(ctx context.Context) error {
		_, err := m.dropRecords(ctx, `SELECT id, blob_keys::text FROM retained_records
			WHERE request_id = $1 AND record_type = $2`, request, erasedFiles)
		return err
	})
}

// awaitImports is ErrImportsRunning while an import of the company is queued, analysed or
// committed: its file or its next rows may hold the person (a row is linked to a contact only
// when analysed), and a commit under way may write the person again. Company-wide, since
// which import holds the person is not known before its analysis. A commission statement being
// parsed counts as an import (statementsUnderWay, commissions.go).
func (m *Module) awaitImports(ctx context.Context, company uuid.UUID) error {
	var busy bool
	err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		return query(ctx, `SELECT EXISTS (SELECT 1 FROM contact_imports WHERE status IN ('queued', 'analyzing', 'running'))
			OR `+statementsUnderWay,
			nil, func(rows rowScanner) error { return rows.Scan(&busy) })
	})
	if err != nil {
		return fmt.Errorf("imports under way: %w", err)
	}
	if busy {
		return ErrImportsRunning
	}
	return nil
}

// copyBlob copies a retained file; a source that is gone already (a retry after the originals
// were deleted) is fine when the copy exists.
func (m *Module) copyBlob(ctx context.Context, f fileCopy) error {
	if ok, _ := m.d.Bucket.Exists(ctx, f.to); ok {
		return nil
	}
	if err := m.d.Bucket.Copy(ctx, f.to, f.from, nil); err != nil {
		return fmt.Errorf("copy retained file: %w", err)
	}
	return nil
}

// rowScanner is a row of query.
type rowScanner = *sql.Rows

// query runs q with args and calls each for every row.
func query(ctx context.Context, q string, args []any, each func(rows rowScanner) error) error {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// add keeps r with raw, the row's JSON, as its data.
func (p *erasurePlan) add(r retained, raw []byte) error {
	data, err := rowData(raw)
	if err != nil {
		return err
	}
	r.data = data
	p.keep = append(p.keep, r)
	return nil
}

// keepRows keeps every row stmt selects (its id and its JSON) as a record of typ under rl.
func (p *erasurePlan) keepRows(ctx context.Context, typ string, rl rule, stmt string, args ...any) error {
	return query(ctx, stmt, args, func(rows rowScanner) error {
		r := retained{typ: typ, rule: rl}
		var raw []byte
		if err := rows.Scan(&r.id, &raw); err != nil {
			return err
		}
		return p.add(r, raw)
	})
}

func rowData(raw []byte) (map[string]any, error) {
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	for k := range out {
		if internalColumn(k) {
			delete(out, k)
		}
	}
	return out, nil
}

// plan reads the contact and the records an erasure keeps (retention.go), with the blobs to
// copy for them.
func (m *Module) plan(ctx context.Context, company uuid.UUID, req *ent.PrivacyRequest) (*erasurePlan, error) {
	p := &erasurePlan{}
	cid := req.ContactID
	c, err := m.contacts().Find(ctx, cid)
	switch {
	case err == nil:
		p.contact = &c
		if c.Email != nil {
			p.email = strings.ToLower(strings.TrimSpace(*c.Email))
		}
	case ent.IsNotFound(err) || errors.Is(err, errs.ErrNotFound):
	default:
		return nil, err
	}
	now := m.now()
	key := func(record uuid.UUID, n int) string {
		return fmt.Sprintf("%s/%s/%s/%s-%d", retainedPrefix, company, req.ID, record, n)
	}
	// Contracts: business letters, or vouchers when commissions were booked on them.
	err = query(ctx, `SELECT c.id, row_to_json(c)::text,
			EXISTS (SELECT 1 FROM commission_entries e WHERE e.contract_id = c.id)
		FROM contracts c WHERE c.contact_id = $1 ORDER BY c.created_at, c.id`, []any{cid}, func(rows *sql.Rows) error {
		var r retained
		var raw []byte
		var booked bool
		if err := rows.Scan(&r.id, &raw, &booked); err != nil {
			return err
		}
		r.typ, r.rule = "contract", ruleLetter
		if booked {
			r.rule = ruleVoucher
		}
		return p.add(r, raw)
	})
	if err != nil {
		return nil, fmt.Errorf("plan contracts: %w", err)
	}
	err = p.keepRows(ctx, "advice_record", ruleAdvice,
		`SELECT id, row_to_json(a)::text FROM advice_records a WHERE contact_id = $1 ORDER BY created_at, id`, cid)
	if err != nil {
		return nil, fmt.Errorf("plan advice records: %w", err)
	}
	err = query(ctx, `SELECT id, type, blob_key, to_jsonb(d) - 'text' FROM documents d WHERE contact_id = $1 ORDER BY created_at, id`,
		[]any{cid}, func(rows *sql.Rows) error {
			var r retained
			var typ, blobKey string
			var raw []byte
			if err := rows.Scan(&r.id, &typ, &blobKey, &raw); err != nil {
				return err
			}
			rl, ok := documentRule(typ)
			if !ok {
				return nil
			}
			r.typ, r.rule = "document", rl
			r.files = []fileCopy{{from: blobKey, to: key(r.id, 0)}}
			return p.add(r, raw)
		})
	if err != nil {
		return nil, fmt.Errorf("plan documents: %w", err)
	}
	// The e-mails with the person: business letters. The message is kept as received or sent
	// (its raw file) with its attachments; the row's copy of the text goes.
	err = query(ctx, `SELECT e.id, e.raw_key, to_jsonb(e) - 'search_text' - 'html_body' - 'text_body',
			coalesce((SELECT json_agg(a.blob_key ORDER BY a.created_at, a.id) FROM email_attachments a WHERE a.email_id = e.id), '[]')::text
		FROM emails e WHERE e.id IN (`+linkedEmails+`) ORDER BY e.created_at, e.id`, []any{cid}, func(rows *sql.Rows) error {
		r := retained{typ: "email", rule: ruleLetter}
		var rawKey *string
		var raw []byte
		var atts []string
		var attsRaw []byte
		if err := rows.Scan(&r.id, &rawKey, &raw, &attsRaw); err != nil {
			return err
		}
		if err := json.Unmarshal(attsRaw, &atts); err != nil {
			return err
		}
		n := 0
		if rawKey != nil {
			r.files = append(r.files, fileCopy{from: *rawKey, to: key(r.id, n)})
			n++
		}
		for _, a := range atts {
			r.files = append(r.files, fileCopy{from: a, to: key(r.id, n)})
			n++
		}
		return p.add(r, raw)
	})
	if err != nil {
		return nil, fmt.Errorf("plan e-mails: %w", err)
	}
	if p.email != "" {
		err = p.keepRows(ctx, "email_opt_out", ruleObjection,
			`SELECT id, row_to_json(o)::text FROM email_opt_outs o WHERE lower(email) = $1`, p.email)
		if err != nil {
			return nil, fmt.Errorf("plan opt-outs: %w", err)
		}
	}
	// The person's master data, without the sealed groups (bank, health: no record above needs
	// them), kept as long as the longest record that names the person.
	if p.contact != nil && len(p.keep) > 0 {
		longest := p.keep[0].rule
		for _, r := range p.keep[1:] {
			if r.rule.until(now).After(longest.until(now)) {
				longest = r.rule
			}
		}
		sel := contacts.Selection{}
		cat := contacts.FieldCatalog()
		for _, g := range cat.GroupNames() {
			sel[g] = !cat.Sensitive(g)
		}
		v, err := m.contacts().View(*p.contact, sel)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		r := retained{typ: "contact", id: p.contact.ID, rule: rule{longest.years,
			"Stammdaten zu den aufbewahrten Unterlagen (Art. 17 (3) lit. b, e DSGVO; " + longest.basis + ")"}}
		if err := json.Unmarshal(b, &r.data); err != nil {
			return nil, err
		}
		p.keep = append(p.keep, r)
	}
	return p, nil
}

// linkedEmails selects the e-mails of a contact ($1): linked one by one or through a thread.
const linkedEmails = `SELECT l.email_id FROM email_links l WHERE l.contact_id = $1 AND l.email_id IS NOT NULL
	UNION SELECT e2.id FROM emails e2 JOIN email_links l2 ON l2.thread_id = e2.thread_id
	WHERE l2.contact_id = $1 AND l2.email_id IS NULL`

// writeRetained inserts the retained records (the app role cannot read them: blocked).
func (m *Module) writeRetained(ctx context.Context, company uuid.UUID, req *ent.PrivacyRequest, p *erasurePlan,
	summary map[string]int) error {
	now := m.now()
	for _, r := range p.keep {
		keys := make([]string, 0, len(r.files))
		for _, f := range r.files {
			keys = append(keys, f.to)
		}
		data, err := json.Marshal(r.data)
		if err != nil {
			return err
		}
		files, err := json.Marshal(keys)
		if err != nil {
			return err
		}
		if _, err := tenancy.Client(ctx).ExecContext(ctx, `INSERT INTO retained_records (id, company_id, request_id,
			contact_id, record_type, record_id, basis, data, blob_keys, retain_until, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, uuid.Must(uuid.NewV7()), company, req.ID, req.ContactID,
			r.typ, r.id, r.rule.basis, data, files, r.rule.until(now), now); err != nil {
			return fmt.Errorf("retain %s %s: %w", r.typ, r.id, err)
		}
		summary["retained."+r.typ]++
	}
	return nil
}

// remove deletes the contact and everything of it, and replaces its data where rows of others
// carry it; it returns the blobs to delete after the commit.
func (m *Module) remove(ctx context.Context, requestID, cid uuid.UUID, p *erasurePlan, summary map[string]int) ([]string, error) {
	db := tenancy.Client(ctx)
	// blob keys; ids of deleted (or blanked) resources whose events and stored answers must go too
	drop, gone := []string(nil), p.blanked
	exec := func(what, q string, args ...any) (int64, error) {
		res, err := db.ExecContext(ctx, q, args...)
		if err != nil {
			return 0, fmt.Errorf("erase %s: %w", what, err)
		}
		n, _ := res.RowsAffected()
		return n, nil
	}
	ids := func(what, q string, args ...any) ([]string, error) {
		var out []string
		err := query(ctx, q, args, func(rows *sql.Rows) error {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("erase %s: %w", what, err)
		}
		return out, nil
	}
	// Blobs of rows that go: documents, e-mails' raw messages and attachments, signature
	// requests' sources, earlier exports' ZIPs.
	keys, err := ids("blobs", `SELECT blob_key FROM documents WHERE contact_id = $1
		UNION ALL SELECT raw_key FROM emails WHERE raw_key IS NOT NULL AND id IN (`+linkedEmails+`)
		UNION ALL SELECT blob_key FROM email_attachments WHERE email_id IN (`+linkedEmails+`)
		UNION ALL SELECT source_blob_key FROM signature_requests WHERE contact_id = $1 AND source_blob_key IS NOT NULL
		UNION ALL SELECT blob_key FROM privacy_requests WHERE contact_id = $1 AND blob_key IS NOT NULL`, cid)
	if err != nil {
		return nil, err
	}
	drop = append(drop, keys...)
	if _, err := exec("exports", `UPDATE privacy_requests SET blob_key = NULL WHERE contact_id = $1 AND blob_key IS NOT NULL`, cid); err != nil {
		return nil, err
	}
	// E-mails with the person, and threads left empty.
	threads, err := ids("threads", `SELECT DISTINCT thread_id::text FROM emails WHERE id IN (`+linkedEmails+`)`, cid)
	if err != nil {
		return nil, err
	}
	emailIDs, err := ids("e-mails", `DELETE FROM emails WHERE id IN (`+linkedEmails+`) RETURNING id::text`, cid)
	if err != nil {
		return nil, err
	}
	gone = append(gone, emailIDs...)
	summary["deleted.emails"] = len(emailIDs)
	if _, err := exec("threads", `DELETE FROM email_threads t WHERE t.id = ANY($1::uuid[])
		AND NOT EXISTS (SELECT 1 FROM emails e WHERE e.thread_id = t.id)`, orEmpty(threads)); err != nil {
		return nil, err
	}
	// Leads of the person (converted into the contact, or with its e-mail), its tasks and
	// appointments: they are about the person (deleting the contact alone would keep them
	// without contactId).
	for _, x := range []struct {
		what, q string
		args    []any
	}{
		{"leads", `DELETE FROM leads WHERE contact_id = $1 OR ($2 <> '' AND lower(email) = $2) RETURNING id::text`, []any{cid, p.email}},
		{"tasks", `DELETE FROM tasks WHERE contact_id = $1 RETURNING id::text`, []any{cid}},
		{"appointments", `DELETE FROM appointments WHERE contact_id = $1 RETURNING id::text`, []any{cid}},
	} {
		got, err := ids(x.what, x.q, x.args...)
		if err != nil {
			return nil, err
		}
		gone = append(gone, got...)
		summary["deleted."+x.what] = len(got)
	}
	if p.email != "" {
		if _, err := exec("opt-outs", `DELETE FROM email_opt_outs WHERE lower(email) = $1`, p.email); err != nil {
			return nil, err
		}
	}
	// The uploaded files of analysed or finished imports that wrote or matched the person: the
	// rows hold what a commit needs, and the file holds the person's row. No import is under
	// way here (awaitImports; docs/decisions/privacy.md "Imports under way").
	files, err := ids("import files", `SELECT i.blob_key FROM contact_imports i WHERE i.status IN ('analyzed', 'completed', 'failed')
		AND EXISTS (SELECT 1 FROM contact_import_rows r WHERE r.import_id = i.id AND r.contact_id = $1)`, cid)
	if err != nil {
		return nil, err
	}
	drop = append(drop, files...)
	summary["deleted.importFiles"] = len(files)
	// Import rows keep their outcome, not the person's cells. A row not committed yet (of an
	// analysed import) becomes invalid, so a later commit skips it instead of writing what is
	// left of the person.
	n, err := exec("import rows", `UPDATE contact_import_rows SET cells = '{}',
			errors = CASE WHEN outcome IS NULL THEN '["erased (GDPR Art. 17)"]'::jsonb END,
			analysis = CASE WHEN outcome IS NULL THEN 'invalid' ELSE analysis END
		WHERE contact_id = $1`, cid)
	if err != nil {
		return nil, err
	}
	summary["blanked.importRows"] = int(n)
	// The contact itself, through the contacts service: its delete hooks (contracts with their
	// events, documents with their blobs) and the cascades of the schema.
	if p.contact != nil {
		c, err := m.contacts().LockContact(ctx, cid)
		if err != nil {
			return nil, err
		}
		if err := m.contacts().Delete(ctx, c); err != nil {
			return nil, err
		}
		summary["deleted.contact"] = 1
	}
	// The event feed: the payloads about the person (written before, and by the deletes above)
	// become {id, erased}; the envelope stays for the feed's cursors and the webhook log.
	needles := []string{cid.String()}
	if p.email != "" {
		needles = append(needles, p.email)
	}
	events, err := ids("events", `UPDATE events SET data = jsonb_build_object('id', data->'id', 'erased', true)
		WHERE NOT (data ? 'erased' AND data->'erased' = 'true'::jsonb) AND (contact_id = $1 OR related_contact_id = $1
			OR data->>'id' = ANY($2::text[])
			OR EXISTS (SELECT 1 FROM unnest($3::text[]) s WHERE strpos(lower(data::text), s) > 0))
		RETURNING id::text`, cid, orEmpty(gone), needles)
	if err != nil {
		return nil, err
	}
	summary["erased.events"] = len(events)
	if _, err := exec("webhook log", `UPDATE webhook_deliveries SET response_body = NULL, error = NULL
		WHERE event_id = ANY($1::uuid[])`, orEmpty(events)); err != nil {
		return nil, err
	}
	// Stored answers of idempotent requests that carried the person's data answer 409 from now
	// on (a retry must not write the person again, nor replay its data; 409 is the status every
	// idempotent operation documents for a key it will not run).
	// The stored answer is sent as it is: requestId names the erasure's request (what support
	// can look up), instance the operation's path is unknown here.
	prob := httpx.ToProblem(errs.Conflict("conflict",
		"what this Idempotency-Key's request wrote was erased (GDPR Art. 17); send a new request with a new key"))
	prob.RequestID = requestID.String()
	body, err := json.Marshal(prob)
	if err != nil {
		return nil, err
	}
	n, err = exec("idempotent answers", `UPDATE idempotency_keys SET response_status = 409,
			response_headers = '{"Content-Type": "application/problem+json"}', response_body = $2
		WHERE response_body IS NOT NULL AND EXISTS (SELECT 1 FROM unnest($1::text[]) s
			WHERE strpos(lower(encode(response_body, 'escape')), lower(s)) > 0)`,
		append(needles, gone...), body)
	if err != nil {
		return nil, err
	}
	summary["erased.idempotentAnswers"] = int(n)
	return drop, nil
}

// orEmpty is s, or an empty slice for a nil one (a nil slice is a NULL array).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
