package privacy

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/privacyrequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ExportArgs name the request a privacy job works on: ids only, never data (river's job rows
// outlive an erasure's reach otherwise).
type ExportArgs struct {
	CompanyID uuid.UUID `json:"companyId"`
	RequestID uuid.UUID `json:"requestId"`
}

// Kind is the job kind.
func (ExportArgs) Kind() string { return "privacy_export" }

// InsertOpts puts exports on the portfolio queue (long file work, two at a time a process).
func (ExportArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueuePortfolio, MaxAttempts: exportAttempts}
}

const (
	// exportAttempts: a failing database or blob store is retried with river's backoff; the
	// last failure marks the request failed (it can be made again).
	exportAttempts = 8
	// exportTimeout bounds one run: a contact with thousands of activities and files takes
	// seconds to a minute; the margin is for slow blob storage.
	exportTimeout = 15 * time.Minute
	// linkLifetime is how long an export's link serves its ZIP after the job wrote it.
	linkLifetime = 7 * 24 * time.Hour
	// exportPrefix is where the ZIPs are stored: <prefix>/<company>/….
	exportPrefix = "privacy"
)

// errContactGone ends an export whose contact was deleted before the job ran.
var errContactGone = errors.New("the contact no longer exists")

type exportWorker struct {
	river.WorkerDefaults[ExportArgs]
	m *Module
}

// Timeout bounds one run.
func (w *exportWorker) Timeout(*river.Job[ExportArgs]) time.Duration { return exportTimeout }

// Work builds the ZIP unless the request has ended. Each attempt writes a new blob and deletes
// it when it fails, so a retry never leaves a half file behind; the request is completed with
// the blob in one guarded UPDATE (status processing), so two runs cannot both complete it.
func (w *exportWorker) Work(ctx context.Context, job *river.Job[ExportArgs]) error {
	err := w.m.export(ctx, job.Args.CompanyID, job.Args.RequestID)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errContactGone):
		w.m.fail(ctx, job.Args.CompanyID, job.Args.RequestID, err.Error())
		return river.JobCancel(err)
	case job.Attempt >= job.MaxAttempts:
		w.m.fail(ctx, job.Args.CompanyID, job.Args.RequestID,
			fmt.Sprintf("the export failed %d times, the last time at %s", job.Attempt, w.m.now().Format(time.RFC3339)))
	}
	return err
}

// fail marks the request failed unless it has ended, and says whether it did. ctx may be over:
// the update has a few seconds of its own.
func (m *Module) fail(ctx context.Context, company, id uuid.UUID, msg string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if utf8.RuneCountInString(msg) > 2000 {
		msg = string([]rune(msg)[:2000])
	}
	var n int
	err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		var err error
		n, err = tenancy.Client(ctx).PrivacyRequest.Update().Where(privacyrequest.ID(id),
			privacyrequest.StatusIn(privacyrequest.StatusQueued, privacyrequest.StatusProcessing)).
			SetStatus(privacyrequest.StatusFailed).SetError(msg).SetCompletedAt(m.now()).Save(ctx)
		return err
	})
	if err != nil {
		m.d.Log.Error().Err(err).Str("privacy_request_id", id.String()).Msg("privacy request: mark failed")
	}
	return n > 0
}

// claim moves a queued request to processing and returns it; nil when it has ended already.
func (m *Module) claim(ctx context.Context, company, id uuid.UUID) (*ent.PrivacyRequest, error) {
	var req *ent.PrivacyRequest
	err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		r, err := tenancy.Client(ctx).PrivacyRequest.Query().Where(privacyrequest.ID(id)).ForUpdate().Only(ctx)
		if err != nil {
			return err
		}
		switch r.Status {
		case privacyrequest.StatusQueued:
			r, err = r.Update().SetStatus(privacyrequest.StatusProcessing).SetUpdatedAt(m.now()).Save(ctx)
		case privacyrequest.StatusProcessing:
		default:
			r = nil
		}
		req = r
		return err
	})
	if ent.IsNotFound(err) {
		return nil, nil // nothing to do: the request is not there (a job of a dropped company)
	}
	return req, err
}

// export writes the ZIP of a data_export request and completes it.
func (m *Module) export(ctx context.Context, company, id uuid.UUID) error {
	req, err := m.claim(ctx, company, id)
	if err != nil || req == nil {
		return err
	}
	key := blobstore.NewKey(exportPrefix, company)
	size, summary, err := m.writeZip(ctx, company, req.ContactID, key)
	if err != nil {
		_ = m.d.Bucket.Delete(context.WithoutCancel(ctx), key)
		return err
	}
	now := m.now()
	var n int
	err = tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		var err error
		n, err = tenancy.Client(ctx).PrivacyRequest.Update().
			Where(privacyrequest.ID(id), privacyrequest.StatusEQ(privacyrequest.StatusProcessing)).
			SetStatus(privacyrequest.StatusCompleted).SetBlobKey(key).SetSize(size).SetSummary(summary).
			SetExpiresAt(now.Add(linkLifetime)).SetCompletedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil || n == 0 { // failed, or another run completed it first: this file is no one's
		_ = m.d.Bucket.Delete(context.WithoutCancel(ctx), key)
	}
	return err
}

// countWriter counts the bytes written to the blob.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeZip streams the ZIP of the contact's data into a new blob at key: the JSON files and
// the original files, written as they are read (bounded memory), then the German README that
// lists them. The reads run in one company-level transaction (every row of the contact, not
// only what the requester sees: the data subject's right covers all of it).
func (m *Module) writeZip(ctx context.Context, company, contactID uuid.UUID, key string) (int64, map[string]int, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bw, err := m.d.Bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/zip"})
	if err != nil {
		return 0, nil, fmt.Errorf("open export blob: %w", err)
	}
	cw := &countWriter{w: bw}
	z := &zipOut{zw: zip.NewWriter(cw), summary: map[string]int{}, now: m.now()}
	err = tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		return m.collect(ctx, z, contactID)
	})
	if err == nil {
		err = z.readme()
	}
	if err == nil {
		err = z.zw.Close()
	}
	if err != nil {
		cancel() // a cancelled writer discards what it had
		_ = bw.Close()
		return 0, nil, err
	}
	if err := bw.Close(); err != nil {
		return 0, nil, fmt.Errorf("store export: %w", err)
	}
	return cw.n, z.summary, nil
}

// zipOut writes the entries and remembers them for the README.
type zipOut struct {
	zw      *zip.Writer
	entries []readmeEntry
	summary map[string]int
	now     time.Time
}

type readmeEntry struct {
	name, what string
	count      int
}

func (z *zipOut) create(name string) (io.Writer, error) {
	return z.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: z.now})
}

// json writes v as an indented JSON file.
func (z *zipOut) json(name, what string, count int, v any) error {
	w, err := z.create(name)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	z.entries = append(z.entries, readmeEntry{name: name, what: what, count: count})
	return nil
}

// file copies r into the ZIP as name.
func (z *zipOut) file(name, what string, r io.Reader) error {
	w, err := z.create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	z.entries = append(z.entries, readmeEntry{name: name, what: what, count: -1})
	return nil
}

// safeName is a file name for a ZIP entry: the stored name without path separators (no entry
// may leave its folder when unpacked), prefixed with the record's id (names repeat).
func safeName(id uuid.UUID, name string) string {
	name = httpx.CleanFilename(name, "datei")
	name = strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(name)
	return id.String() + "-" + name
}

// collect writes every personal datum of the contact: the contact as the API shows it with
// every group (sensitive ones decrypted) and its phones, then each table that names it
// (sections), then the original files.
func (m *Module) collect(ctx context.Context, z *zipOut, contactID uuid.UUID) error {
	c, err := m.d.Contacts.Find(ctx, contactID)
	if ent.IsNotFound(err) || errors.Is(err, errs.ErrNotFound) {
		return errContactGone
	}
	if err != nil {
		return err
	}
	sel := contacts.Selection{}
	for _, g := range contacts.FieldCatalog().GroupNames() {
		sel[g] = true
	}
	v, err := m.d.Contacts.View(c, sel)
	if err != nil {
		return err
	}
	if err := z.json("kontakt.json", "Ihre Stammdaten mit allen Angaben und Telefonnummern", 1, v); err != nil {
		return err
	}
	z.summary["contact"] = 1
	for _, s := range sections {
		n, err := z.rows(ctx, s, contactID)
		if err != nil {
			return fmt.Errorf("export %s: %w", s.file, err)
		}
		z.summary[s.key] = n
	}
	return m.files(ctx, z, contactID)
}

// rows writes the rows of a section as one JSON array, streamed row by row.
func (z *zipOut) rows(ctx context.Context, s section, contactID uuid.UUID) (int, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, s.query, contactID)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	w, err := z.create(s.file)
	if err != nil {
		return 0, err
	}
	n := 0
	if _, err := io.WriteString(w, "["); err != nil {
		return 0, err
	}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return 0, err
		}
		var row map[string]any
		if err := json.Unmarshal(raw, &row); err != nil {
			return 0, err
		}
		for k := range row {
			if internalColumn(k) {
				delete(row, k)
			}
		}
		b, err := json.MarshalIndent(row, "  ", "  ")
		if err != nil {
			return 0, err
		}
		sep := "\n  "
		if n > 0 {
			sep = ",\n  "
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return 0, err
		}
		if _, err := w.Write(b); err != nil {
			return 0, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if _, err := io.WriteString(w, "\n]\n"); err != nil {
		return 0, err
	}
	z.entries = append(z.entries, readmeEntry{name: s.file, what: s.what, count: n})
	return n, nil
}

// internalColumn: columns that are not the person's data but our machinery or secrets
// (hashes of passwords and tokens, TOTP secrets, storage keys, derived search columns, the
// tenant key, the sealed form of groups the contact file shows decrypted).
func internalColumn(k string) bool {
	switch k {
	case "company_id", "blob_key", "raw_key", "source_blob_key", "search_text", "sort_name", "email_key", "phone_key",
		"number_key", "totp_secret", "totp_last_step", "sensitive", "signature_hash", "policy_key":
		return true
	}
	return strings.HasSuffix(k, "_hash")
}

// files copies the original files: documents, the raw e-mails and their attachments, and the
// files attached to leads.
func (m *Module) files(ctx context.Context, z *zipOut, contactID uuid.UUID) error {
	type stored struct {
		id       uuid.UUID
		name     string
		key      string
		folder   string
		what     string
		inline   []byte
		countKey string
	}
	var list []stored
	read := func(q, folder, what, countKey string) error {
		rows, err := tenancy.Client(ctx).QueryContext(ctx, q, contactID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			s := stored{folder: folder, what: what, countKey: countKey}
			var key *string
			if err := rows.Scan(&s.id, &s.name, &key, &s.inline); err != nil {
				return err
			}
			if key != nil {
				s.key = *key
			}
			list = append(list, s)
		}
		return rows.Err()
	}
	if err := read(`SELECT id, filename, blob_key, NULL::bytea FROM documents WHERE contact_id = $1 ORDER BY created_at, id`,
		"dokumente/", "Dokument (Originaldatei)", "documentFiles"); err != nil {
		return err
	}
	if err := read(`SELECT e.id, e.id::text || '.eml', e.raw_key, NULL::bytea FROM emails e
		WHERE e.raw_key IS NOT NULL AND e.id IN (SELECT email_id FROM email_links WHERE contact_id = $1 AND email_id IS NOT NULL)
		ORDER BY e.created_at, e.id`, "e-mails/", "E-Mail (Originalnachricht)", "emailMessages"); err != nil {
		return err
	}
	if err := read(`SELECT a.id, a.filename, a.blob_key, NULL::bytea FROM email_attachments a
		WHERE a.email_id IN (SELECT email_id FROM email_links WHERE contact_id = $1 AND email_id IS NOT NULL)
		ORDER BY a.created_at, a.id`, "e-mails/anhaenge/", "E-Mail-Anhang", "emailAttachments"); err != nil {
		return err
	}
	if err := read(`SELECT id, filename, NULL, content FROM lead_attachments WHERE contact_id = $1 ORDER BY created_at, id`,
		"anfragen/", "Anhang einer Anfrage", "leadAttachments"); err != nil {
		return err
	}
	for _, s := range list {
		name := s.folder + safeName(s.id, s.name)
		if s.key == "" {
			if err := z.file(name, s.what, strings.NewReader(string(s.inline))); err != nil {
				return err
			}
			z.summary[s.countKey]++
			continue
		}
		r, err := m.d.Bucket.NewReader(ctx, s.key, nil)
		if err != nil {
			return fmt.Errorf("read %s: %w", s.what, err)
		}
		err = z.file(name, s.what, r)
		_ = r.Close()
		if err != nil {
			return err
		}
		z.summary[s.countKey]++
	}
	return nil
}
