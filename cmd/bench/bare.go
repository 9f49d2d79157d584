package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brokerdesk/brokerdesk/policy"
)

// The statements of the bare program, verbatim as the server sends them (tenancy's credential
// lookup; the rest as ent writes them, captured with app.WithSQLTrace). The run checks them
// against a trace of the server before it measures (trace.go), so they cannot fall behind.
const (
	// authQuery is tenancy's credential lookup and pin (tenancy/middleware.go).
	authQuery = `SELECT key_id, key_prefix, key_hash, kind, env, scopes, allowed_domains,
	company_id, live_company_id, sandbox, features, user_id, user_role,
	company_name, user_email, user_first_name, user_last_name, owner_ids,
	set_config('app.company_id', company_id::text, true),
	set_config('app.user_id', coalesce(user_id::text, ''), true),
	set_config('app.visibility', CASE WHEN user_id IS NULL OR user_role = ANY($2::text[]) THEN 'all'
		ELSE 'own_and_delegated' END, true)
FROM auth_credential($1, $2::text[])`

	// companyQuery is tx.Company.Get(ctx, id) under the FilterOwnCompany privacy rule: the id
	// predicate twice, the filter's and Get's, and LIMIT 2 from Only.
	companyQuery = `SELECT "companies"."id", "companies"."created_at", "companies"."updated_at", "companies"."version", "companies"."name", "companies"."address", "companies"."links", "companies"."features", "companies"."status", "companies"."sandbox", "companies"."live_company_id", "companies"."lead_rules" FROM "companies" WHERE "companies"."id" = $1 AND "companies"."id" = $2 LIMIT 2`

	// The intake (app/intake/service.go Submit).
	lockQuery = `SELECT pg_advisory_xact_lock($1)`

	leadColumns = `"leads"."id", "leads"."company_id", "leads"."created_at", "leads"."updated_at", "leads"."version", "leads"."external_references", "leads"."first_name", "leads"."last_name", "leads"."email", "leads"."email_key", "leads"."phone", "leads"."phone_key", "leads"."source", "leads"."notes", "leads"."additional_fields", "leads"."meta_url", "leads"."stage_id", "leads"."owner_id", "leads"."converted", "leads"."converted_at", "leads"."contact_id", "leads"."test", "leads"."submissions", "leads"."origin"`

	// findDuplicateQuery: open intake leads of the test flag with the e-mail or the phone key
	// (the intake then applies app/platform/identity's rule to them in Go).
	findDuplicateQuery = `SELECT ` + leadColumns + ` FROM "leads" WHERE (((NOT "leads"."converted" AND NOT "leads"."test") AND "leads"."origin" = $1) AND ("leads"."email_key" = $2 OR "leads"."phone_key" = $3)) AND "leads"."company_id" = $4 ORDER BY "leads"."created_at", "leads"."id" FOR UPDATE`

	stageQuery = `SELECT "lead_stages"."id", "lead_stages"."company_id", "lead_stages"."created_at", "lead_stages"."updated_at", "lead_stages"."key", "lead_stages"."name", "lead_stages"."color", "lead_stages"."position", "lead_stages"."is_final" FROM "lead_stages" WHERE "lead_stages"."key" = $1 AND "lead_stages"."company_id" = $2 LIMIT 2`

	insertLeadQuery = `INSERT INTO "leads" ("created_at", "updated_at", "version", "first_name", "last_name", "email", "email_key", "phone", "phone_key", "source", "notes", "additional_fields", "meta_url", "stage_id", "owner_id", "converted", "test", "submissions", "origin", "company_id", "id") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`

	// updateLeadQuery is the merge of a duplicate that has every field already: its notes get
	// the submission's appended.
	updateLeadQuery = `UPDATE "leads" SET "updated_at" = $1, "notes" = $2, "version" = COALESCE("leads"."version", 0) + $3, "submissions" = COALESCE("leads"."submissions", 0) + $4 WHERE "id" = $5 AND "leads"."company_id" = $6`

	// reselectLeadQuery is ent reading the updated row back (UpdateOne.Save).
	reselectLeadQuery = `SELECT "id", "company_id", "created_at", "updated_at", "version", "external_references", "first_name", "last_name", "email", "email_key", "phone", "phone_key", "source", "notes", "additional_fields", "meta_url", "stage_id", "owner_id", "converted", "converted_at", "contact_id", "test", "submissions", "origin" FROM "leads" WHERE "id" = $1`

	attachmentsQuery = `SELECT "lead_attachments"."id", "lead_attachments"."lead_id", "lead_attachments"."filename", "lead_attachments"."content_type", "lead_attachments"."size", "lead_attachments"."created_at" FROM "lead_attachments" WHERE "lead_attachments"."lead_id" = $1 AND "lead_attachments"."company_id" = $2 ORDER BY "lead_attachments"."created_at", "lead_attachments"."id"`

	insertSubmissionQuery = `INSERT INTO "lead_submissions" ("lead_id", "received_at", "channel", "outcome", "credential_id", "payload", "company_id", "id") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

	// insertEventQuery is app/events.RecordAbout: a lead's event names its owner (no contact: a
	// lead is visible by its owner alone) and is user-scoped (the visibility layer).
	insertEventQuery = `INSERT INTO events (id, company_id, type, occurred_at, data, actor, contact_id, owner_id, co_owner_id,
  related_contact_id, related_owner_id, user_scoped)
VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8, (SELECT c.owner_id FROM contacts c WHERE c.id = $7)), $9,
  $10, coalesce($11, (SELECT c.owner_id FROM contacts c WHERE c.id = $10)), $12)`
)

// seeAll is the lookup's second argument, as tenancy passes it: the roles that see every contact.
var seeAll = "{" + strings.Join(policy.Default().RolesSeeingAll(), ",") + "}"

// bare is the bare pgx program: a pgxpool as the app role, as large as the server's, where one
// "request" is the server's SQL for it, round trip for round trip, in one transaction (BEGIN
// ... COMMIT, as the server's request transaction). It scans the rows it needs and encodes the
// JSON it stores (with encoding/json, as any Go program would), but does no HTTP, no body
// parsing, no validation and no ent. UUIDs travel as pgtype.UUID, which pgx encodes and decodes
// in binary directly (a google/uuid value would go through driver.Valuer and text).
type bare struct {
	pool   *pgxpool.Pool
	berlin *time.Location
}

func newBare(ctx context.Context, fx fixture) (*bare, error) {
	pcfg, err := pgxpool.ParseConfig(fx.appURL)
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = int32(fx.cfg.DBMaxConns) // as app.NewServer sets it
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &bare{pool: pool, berlin: berlin}, nil
}

func (b *bare) close() { b.pool.Close() }

// stmt is one statement sent: its text and number of arguments.
type stmt struct {
	sql  string
	args int
}

// btx is the bare program's transaction on a connection of the pool; rec, when set, records
// the statements (for the check).
type btx struct {
	c   *pgxpool.Conn
	rec *[]stmt
}

func (t btx) record(sql string, args []any) {
	if t.rec != nil {
		*t.rec = append(*t.rec, stmt{sql, len(args)})
	}
}

func (t btx) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	t.record(sql, args)
	return t.c.Query(ctx, sql, args...)
}

func (t btx) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	t.record(sql, args)
	return t.c.QueryRow(ctx, sql, args...)
}

func (t btx) exec(ctx context.Context, sql string, args ...any) error {
	t.record(sql, args)
	_, err := t.c.Exec(ctx, sql, args...)
	return err
}

// begin starts a request transaction with the credential lookup that pins it, in one round
// trip as the server does (BEGIN and the lookup as one pgx batch); done commits it on success
// and rolls it back otherwise. A connection left inside a transaction is destroyed by the pool.
func (b *bare) begin(ctx context.Context, hash []byte, rec *[]stmt) (btx, principal, func(*error), error) {
	var p principal
	c, err := b.pool.Acquire(ctx)
	if err != nil {
		return btx{}, p, nil, err
	}
	t := btx{c: c, rec: rec}
	args := []any{hash, seeAll}
	t.record(authQuery, args)
	batch := &pgx.Batch{}
	batch.Queue("begin")
	batch.Queue(authQuery, args...).Query(func(rows pgx.Rows) error {
		var err error
		p, err = scanPrincipal(rows, hash)
		return err
	})
	if err := c.SendBatch(ctx, batch).Close(); err != nil {
		_, _ = c.Exec(ctx, "rollback")
		c.Release()
		return btx{}, p, nil, err
	}
	done := func(err *error) {
		defer c.Release()
		if *err != nil {
			_, _ = c.Exec(ctx, "rollback")
			return
		}
		tag, e := c.Exec(ctx, "commit") // COMMIT
		if e == nil && tag.String() == "ROLLBACK" {
			e = pgx.ErrTxCommitRollback
		}
		*err = e
	}
	return t, p, done, nil
}

// principal is what the bare program keeps of the credential lookup.
type principal struct {
	keyID, companyID, userID pgtype.UUID
	prefix, companyName      string
	kind, env                string
	scopes, features         []byte // jsonb
	sandbox                  bool
}

// scanPrincipal reads the credential lookup's row (auth_credential + set_config).
func scanPrincipal(rows pgx.Rows, hash []byte) (p principal, err error) {
	var (
		liveCompanyID                  pgtype.UUID
		pinned, pinnedUser, visibility string
		userRole, email, first, last   pgtype.Text
		stored, domains                []byte
		owners                         []pgtype.UUID
	)
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return p, err
		}
		return p, errors.New("credential not found")
	}
	if err := rows.Scan(&p.keyID, &p.prefix, &stored, &p.kind, &p.env, &p.scopes, &domains,
		&p.companyID, &liveCompanyID, &p.sandbox, &p.features, &p.userID, &userRole, &p.companyName, &email, &first, &last,
		&owners, &pinned, &pinnedUser, &visibility); err != nil {
		return p, err
	}
	if subtle.ConstantTimeCompare(stored, hash) != 1 {
		return p, errors.New("hash mismatch")
	}
	return p, nil
}

// companyRow holds the columns ent selects.
type companyRow struct {
	id                   pgtype.UUID
	createdAt, updatedAt time.Time
	version              int64
	name                 string
	address, links       []byte
	features             []byte
	status               string
	sandbox              bool
	liveCompanyID        pgtype.UUID
	leadRules            []byte
}

func (t btx) company(ctx context.Context, id pgtype.UUID) (co companyRow, err error) {
	err = t.queryRow(ctx, companyQuery, id, id).Scan(&co.id, &co.createdAt, &co.updatedAt, &co.version, &co.name,
		&co.address, &co.links, &co.features, &co.status, &co.sandbox, &co.liveCompanyID, &co.leadRules)
	return co, err
}

// me is GET /me: BEGIN with the credential lookup (one round trip), whose row carries what /me
// shows (the server reads nothing else); COMMIT.
func (b *bare) me(ctx context.Context, hash []byte, rec *[]stmt) (p principal, err error) {
	_, p, done, err := b.begin(ctx, hash, rec)
	if err != nil {
		return p, err
	}
	done(&err)
	return p, err
}

func (b *bare) meDoer(l *lease) doer { return meDoer{b, l} }

type meDoer struct {
	b     *bare
	lease *lease
}

func (d meDoer) do(ctx context.Context) (bool, error) {
	k, _, err := d.lease.get(ctx)
	if err != nil {
		return false, err
	}
	_, err = d.b.me(ctx, k.hash, nil)
	return err == nil, err
}

func (d meDoer) close() { d.lease.close() }

// leadRow holds the columns of a lead.
type leadRow struct {
	id, companyID        pgtype.UUID
	createdAt, updatedAt time.Time
	version              int64
	externalRefs         []byte
	firstName, lastName  string
	email, emailKey      *string
	phone, phoneKey      *string
	source               *string
	notes                string
	additionalFields     []byte
	metaURL              *string
	stageID              pgtype.UUID
	ownerID              pgtype.UUID
	converted            bool
	convertedAt          *time.Time
	contactID            pgtype.UUID
	test                 bool
	submissions          int64
	origin               string
}

func (l *leadRow) targets() []any {
	return []any{&l.id, &l.companyID, &l.createdAt, &l.updatedAt, &l.version, &l.externalRefs, &l.firstName,
		&l.lastName, &l.email, &l.emailKey, &l.phone, &l.phoneKey, &l.source, &l.notes, &l.additionalFields,
		&l.metaURL, &l.stageID, &l.ownerID, &l.converted, &l.convertedAt, &l.contactID, &l.test, &l.submissions, &l.origin}
}

// lockIDs are the advisory lock ids of a submission's identity keys, ascending: 64 bits of
// SHA-256 over company, kind and key, as the intake computes them.
func lockIDs(company [16]byte, email, phone string) []int64 {
	var ids []int64
	for _, k := range [][2]string{{"email", email}, {"phone", phone}} {
		if k[1] == "" {
			continue
		}
		h := sha256.New()
		h.Write(company[:])
		h.Write([]byte("\x00lead-identity\x00" + k[0] + "\x00" + k[1]))
		ids = append(ids, int64(binary.BigEndian.Uint64(h.Sum(nil))))
	}
	slices.Sort(ids)
	return ids
}

// payload is the submission as stored on lead_submissions (keys in the order encoding/json
// writes the server's map).
type payload struct {
	AdditionalFields json.RawMessage `json:"additionalFields"`
	Email            string          `json:"email"`
	FirstName        string          `json:"firstName"`
	LastName         string          `json:"lastName"`
	MetaURL          string          `json:"metaUrl"`
	Notes            string          `json:"notes"`
	Phone            string          `json:"phone"`
	Source           string          `json:"source"`
	Test             bool            `json:"test"`
}

// leadView is the Lead resource as the event stores it (app/leads.View).
type leadView struct {
	ID                 pgtype.UUID     `json:"id"`
	FirstName          string          `json:"firstName"`
	LastName           string          `json:"lastName"`
	Email              *string         `json:"email"`
	Phone              *string         `json:"phone"`
	Source             *string         `json:"source"`
	Notes              string          `json:"notes"`
	AdditionalFields   json.RawMessage `json:"additionalFields"`
	MetaURL            *string         `json:"metaUrl"`
	StageID            pgtype.UUID     `json:"stageId"`
	OwnerID            pgtype.UUID     `json:"ownerId"` // null when not Valid
	Converted          bool            `json:"converted"`
	ConvertedAt        *time.Time      `json:"convertedAt"`
	ContactID          pgtype.UUID     `json:"contactId"`
	Test               bool            `json:"test"`
	Submissions        int64           `json:"submissions"`
	Attachments        []struct{}      `json:"attachments"`
	ExternalReferences json.RawMessage `json:"externalReferences"`
	CreatedAt          time.Time       `json:"createdAt"`
	UpdatedAt          time.Time       `json:"updatedAt"`
}

func viewOf(l *leadRow) leadView {
	v := leadView{ID: l.id, FirstName: l.firstName, LastName: l.lastName, Email: l.email, Phone: l.phone,
		Source: l.source, Notes: l.notes, AdditionalFields: l.additionalFields, MetaURL: l.metaURL, StageID: l.stageID,
		OwnerID: l.ownerID, Converted: l.converted, ConvertedAt: l.convertedAt, ContactID: l.contactID, Test: l.test,
		Submissions: l.submissions, Attachments: []struct{}{}, ExternalReferences: l.externalRefs,
		CreatedAt: l.createdAt, UpdatedAt: l.updatedAt}
	if len(v.ExternalReferences) == 0 {
		v.ExternalReferences = json.RawMessage(`[]`)
	}
	return v
}

type actor struct {
	Type         string `json:"type"`
	CredentialID string `json:"credentialId"`
	KeyPrefix    string `json:"keyPrefix"`
	UserID       string `json:"userId,omitempty"`
}

func newID() pgtype.UUID { return pgtype.UUID{Bytes: uuid.Must(uuid.NewV7()), Valid: true} }

// intake is one submission of p to the legacy endpoint: BEGIN; the credential lookup; the
// company (its duplicate rules); an advisory lock per identity key; the duplicate lookup (FOR
// UPDATE); then for a new person the stage new and the lead insert, for a duplicate the merge
// update and ent's read-back; the lead's attachments; the submission; the event; COMMIT (where
// the deferred trigger numbers the event under the company's counter row lock).
func (b *bare) intake(ctx context.Context, hash []byte, p person, rec *[]stmt) (outcome string, err error) {
	t, pr, done, err := b.begin(ctx, hash, rec)
	if err != nil {
		return "", err
	}
	defer done(&err)
	co, err := t.company(ctx, pr.companyID)
	if err != nil {
		return "", err
	}
	for _, id := range lockIDs(co.id.Bytes, p.emailKey, p.phoneKey) {
		if err := t.exec(ctx, lockQuery, id); err != nil {
			return "", err
		}
	}
	rows, err := t.query(ctx, findDuplicateQuery, "intake", p.emailKey, p.phoneKey, co.id)
	if err != nil {
		return "", err
	}
	var found *leadRow
	for rows.Next() {
		var l leadRow
		if err := rows.Scan(l.targets()...); err != nil {
			rows.Close()
			return "", err
		}
		if found == nil || (l.emailKey != nil && *l.emailKey == p.emailKey && (found.emailKey == nil || *found.emailKey != p.emailKey)) {
			found = &l
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	now := time.Now()
	var l leadRow
	if found == nil {
		outcome = "created"
		var st struct {
			id, company          pgtype.UUID
			createdAt, updatedAt time.Time
			key, name, color     string
			position             int64
			final                bool
		}
		if err := t.queryRow(ctx, stageQuery, "new", co.id).Scan(&st.id, &st.company, &st.createdAt, &st.updatedAt,
			&st.key, &st.name, &st.color, &st.position, &st.final); err != nil {
			return "", err
		}
		email, emailKey, phone, phoneKey, source, meta := p.email, p.emailKey, p.phone, p.phoneKey, leadSource, leadMetaURL
		l = leadRow{id: newID(), companyID: co.id, createdAt: time.Now(), version: 1, firstName: leadFirstName,
			lastName: leadLastName, email: &email, emailKey: &emailKey, phone: &phone, phoneKey: &phoneKey,
			source: &source, notes: leadNotes, additionalFields: []byte(leadFieldsJSON), metaURL: &meta,
			stageID: st.id, ownerID: pr.userID, submissions: 1}
		l.updatedAt = time.Now()
		if err := t.exec(ctx, insertLeadQuery, l.createdAt, l.updatedAt, l.version, l.firstName, l.lastName, email,
			emailKey, phone, phoneKey, source, l.notes, l.additionalFields, meta, l.stageID, pr.userID,
			false, false, l.submissions, "intake", co.id, l.id); err != nil {
			return "", err
		}
	} else {
		outcome = "updated"
		l = *found
		if l.email == nil || l.phone == nil || l.source == nil || l.metaURL == nil || l.firstName == "" || l.lastName == "" {
			return "", fmt.Errorf("bare: lead %s lacks fields; this program merges only complete leads", l.id)
		}
		notes := "--- " + now.In(b.berlin).Format("2006-01-02 15:04:05 -07:00") + " ---\n" + leadNotes
		if l.notes != "" {
			notes = l.notes + "\n\n" + notes
		}
		if err := t.exec(ctx, updateLeadQuery, time.Now(), notes, 1, 1, l.id, co.id); err != nil {
			return "", err
		}
		if err := t.queryRow(ctx, reselectLeadQuery, l.id).Scan(l.targets()...); err != nil {
			return "", err
		}
	}
	arows, err := t.query(ctx, attachmentsQuery, l.id, co.id)
	if err != nil {
		return "", err
	}
	if arows.Next() {
		arows.Close()
		return "", errors.New("bare: the lead has attachments")
	}
	arows.Close()
	if err := arows.Err(); err != nil {
		return "", err
	}
	pl, err := json.Marshal(payload{AdditionalFields: json.RawMessage(leadFieldsJSON), Email: p.email,
		FirstName: leadFirstName, LastName: leadLastName, MetaURL: leadMetaURL, Notes: leadNotes, Phone: p.phone,
		Source: leadSource})
	if err != nil {
		return "", err
	}
	if err := t.exec(ctx, insertSubmissionQuery, l.id, now, "legacy", outcome, pr.keyID, pl, co.id, newID()); err != nil {
		return "", err
	}
	data, err := json.Marshal(viewOf(&l))
	if err != nil {
		return "", err
	}
	a := actor{Type: "credential", CredentialID: pr.keyID.String(), KeyPrefix: pr.prefix}
	if pr.userID.Valid {
		a.UserID = pr.userID.String()
	}
	act, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	if err := t.exec(ctx, insertEventQuery, newID(), co.id, "lead."+outcome, time.Now(), data, act, nil, l.ownerID,
		nil, nil, nil, true); err != nil {
		return "", err
	}
	return outcome, nil
}

// intakeDoer returns the bare program's doers for intake load body: the same persons the server
// side gets (a new one, or the next existing lead for dup). JSON and form bodies differ only
// in what the server parses, so their bare requests are the same.
func (b *bare) intakeDoer(body string) func(l *lease) doer {
	want := "created"
	if body == bodyDup {
		want = "updated"
	}
	return func(l *lease) doer { return intakeDoer{b: b, body: body, want: want, lease: l} }
}

type intakeDoer struct {
	b          *bare
	body, want string
	lease      *lease
}

func (d intakeDoer) do(ctx context.Context) (bool, error) {
	k, _, err := d.lease.get(ctx)
	if err != nil {
		return false, err
	}
	out, err := d.b.intake(ctx, k.hash, nextPerson(d.body), nil)
	return err == nil && out == d.want, err
}

func (d intakeDoer) close() { d.lease.close() }
