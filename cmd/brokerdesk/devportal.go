package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"net/textproto"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The demo customer of the customer portal (issue 23): a private contact of the demo company
// with two contracts, one document released to the customer (and one that is not, so the
// portal's rule shows) and an active portal access with a known password, printed with the
// portal's sign-in link. Her e-mail is the demo customer's mailbox on the loopback mail server
// (devmail.go), so a password reset or an invitation sent later arrives there and is echoed.
const (
	demoPortalFirst    = "Klara"
	demoPortalLast     = "Kundin"
	demoPortalPassword = "kunde-demo-2026"
)

// devPortal is what dev prints about the portal.
type devPortal struct {
	ContactID uuid.UUID
	Email     string
	Password  string
	Seeded    bool // created on this run
}

// seedPortal makes sure the demo customer exists (created once, through the API of srv in
// process, with the live secret key: the contact, its contracts and documents are what a broker
// would make) and that her access is active with demoPortalPassword. The access is written
// directly: an accepted invitation is what it stands for, and the invitation's secret only
// ever exists in a mail. Every run sets the password (and clears a second factor) again, so
// the printed credentials always sign in. It runs before the server listens.
func seedPortal(ctx context.Context, srv *app.Server, ownerURL, keysFile string, k *demoKeys) (devPortal, error) {
	p := devPortal{Email: demoCustomerMail, Password: demoPortalPassword}
	api := devAPI{srv: srv, key: k.SecretLive}
	exists := false
	if k.PortalContactID != uuid.Nil {
		status, _, err := api.do("GET", "/contacts/"+k.PortalContactID.String(), nil, "")
		if err != nil {
			return p, err
		}
		exists = status == 200
	}
	if !exists {
		id, err := createPortalCustomer(api)
		if err != nil {
			return p, fmt.Errorf("demo customer: %w", err)
		}
		k.PortalContactID, p.Seeded = id, true
		if err := writeKeys(keysFile, *k); err != nil {
			return p, err
		}
	}
	p.ContactID = k.PortalContactID
	return p, activatePortal(ctx, ownerURL, k.CompanyID, p)
}

// createPortalCustomer creates the contact, its two contracts and two documents (one released
// to the customer) and returns the contact's id.
func createPortalCustomer(api devAPI) (uuid.UUID, error) {
	var contact struct{ ID uuid.UUID }
	if err := api.create("/contacts", map[string]any{"type": "private", "firstName": demoPortalFirst,
		"lastName": demoPortalLast, "email": demoCustomerMail, "address": map[string]any{"street": "Lindenstraße",
			"houseNumber": "12", "zipCode": "20095", "city": "Hamburg", "country": "DE"}}, &contact); err != nil {
		return uuid.Nil, err
	}
	// A step failing leaves no half-made customer for the next run to skip past.
	fail := func(err error) (uuid.UUID, error) {
		_, _, _ = api.do("DELETE", "/contacts/"+contact.ID.String(), nil, "")
		return uuid.Nil, err
	}
	var insurers struct{ Data []struct{ ID string } }
	if status, body, err := api.do("GET", "/insurers?vuNumber=5501", nil, ""); err != nil || status != 200 {
		return fail(fmt.Errorf("insurer 5501: %d %s %v", status, body, err))
	} else if err := json.Unmarshal(body, &insurers); err != nil || len(insurers.Data) == 0 {
		return fail(fmt.Errorf("insurer 5501 not in the catalog: %s", body))
	}
	for _, c := range []map[string]any{
		{"policyNumber": "HR-2026-0042", "type": "130", "premium": "9.90", "paymentFrequency": "monthly", "startDate": "2026-01-01"},
		{"policyNumber": "PHV-2025-1187", "type": "040", "premium": "64.00", "paymentFrequency": "yearly", "startDate": "2025-07-01"},
	} {
		c["contactId"], c["insurerId"], c["status"] = contact.ID, insurers.Data[0].ID, "active"
		if err := api.create("/contracts", c, nil); err != nil {
			return fail(err)
		}
	}
	for _, d := range []struct {
		name, body string
		release    bool
	}{
		{"Versicherungsschein-Hausrat.pdf", "# Versicherungsschein\nHausratversicherung HR-2026-0042 für Klara Kundin, " +
			"Lindenstraße 12, 20095 Hamburg.\n\nBeitrag 9,90 € monatlich ab 1. Januar 2026.", true},
		{"Beratungsnotiz-intern.pdf", "# Beratungsnotiz (intern)\nNicht für die Kundin freigegeben: das Portal zeigt " +
			"nur Dokumente, die der Makler freigibt.", false},
	} {
		if err := api.uploadPDF(contact.ID, d.name, d.body, d.release); err != nil {
			return fail(err)
		}
	}
	return contact.ID, nil
}

// activatePortal creates or updates the contact's access: active, with p's e-mail and password
// and no second factor. Operator work pinned to the demo company (cmd/ only).
func activatePortal(ctx context.Context, ownerURL string, companyID uuid.UUID, p devPortal) error {
	db, err := sql.Open("pgx", ownerURL)
	if err != nil {
		return err
	}
	client := ent.NewClient(ent.Driver(tenancy.NewDriver(db)))
	defer client.Close()
	octx := tenancy.WithCompany(tenancy.WithOperator(ctx), companyID)
	tx, err := client.Tx(octx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	hash := passhash.Hash(p.Password)
	now := time.Now()
	acc, err := tx.PortalAccess.Query().Where(portalaccess.CompanyID(companyID), portalaccess.ContactID(p.ContactID)).Only(octx)
	switch {
	case ent.IsNotFound(err):
		err = tx.PortalAccess.Create().SetCompanyID(companyID).SetContactID(p.ContactID).SetEmail(p.Email).
			SetStatus(portalaccess.StatusActive).SetPasswordHash(hash).SetInvitedAt(now).SetActivatedAt(now).Exec(octx)
	case err == nil:
		err = tx.PortalAccess.UpdateOne(acc).SetEmail(p.Email).SetStatus(portalaccess.StatusActive).
			SetPasswordHash(hash).ClearTotpSecret().ClearTotpEnabledAt().ClearRevokedAt().
			SetActivatedAt(now).Exec(octx)
	}
	if err != nil {
		return fmt.Errorf("demo portal access: %w", err)
	}
	return tx.Commit()
}

// devAPI calls the public API of srv in process (srv.App.Test), as the broker would over HTTP.
type devAPI struct {
	srv *app.Server
	key string
}

// do sends one request and returns the status and body.
func (a devAPI) do(method, path string, body []byte, contentType string) (int, []byte, error) {
	req := httptest.NewRequest(method, app.V1Prefix+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := a.srv.App.Test(req, -1)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// create POSTs body as JSON and decodes the 201 answer into out (when not nil).
func (a devAPI) create(path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	status, resp, err := a.do("POST", path, b, "application/json")
	if err != nil {
		return err
	}
	if status != 201 {
		return fmt.Errorf("POST %s: %d %s", path, status, resp)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp, out)
}

// uploadPDF renders body and uploads it as a document (type policy) of contact.
func (a devAPI) uploadPDF(contact uuid.UUID, filename, body string, release bool) error {
	r, err := pdf.Render(body, nil, pdf.Meta{Title: filename, CreatedAt: time.Now()})
	if err != nil {
		return fmt.Errorf("render %s: %w", filename, err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "policy")
	if release {
		_ = mw.WriteField("releasedToCustomer", "true")
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := mw.CreatePart(h)
	_, _ = fw.Write(r.PDF)
	_ = mw.Close()
	status, resp, err := a.do("POST", "/contacts/"+contact.String()+"/documents", buf.Bytes(), mw.FormDataContentType())
	if err != nil {
		return err
	}
	if status != 201 {
		return fmt.Errorf("upload %s: %d %s", filename, status, resp)
	}
	return nil
}

// print writes the portal's sign-in link and the demo customer's credentials.
func (p devPortal) print(w io.Writer, url string, k demoKeys) {
	seeded := "from an earlier run"
	if p.Seeded {
		seeded = "seeded now"
	}
	fmt.Fprintf(w, "  customer portal  %s/portal/%s/login\n", url, k.CompanyID)
	fmt.Fprintf(w, "    %-22s password %s   (%s %s: two contracts, one released document; %s)\n",
		p.Email, p.Password, demoPortalFirst, demoPortalLast, seeded)
	fmt.Fprintf(w, "    the password is set again on every run; her change requests, to approve or reject:\n")
	fmt.Fprintf(w, "  curl -s %s%s/portal-change-requests -H \"Authorization: Bearer %s\"\n\n", url, app.V1Prefix, k.SecretLive)
}
