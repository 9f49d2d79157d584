package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/google/uuid"
)

// The intake load: POST /api/public/leads (app/intake.LegacyPath) as a website sends it, from a
// page on benchDomain (the Origin the publishable keys allow).
const (
	intakePath  = "/api/public/leads"
	benchDomain = "example.com"
	benchOrigin = "https://www.example.com"

	// existingLeads is how many open leads the company has before the run (its lead board); the
	// duplicate load merges into the first dupPersons of them, round robin.
	existingLeads = 10000
	dupPersons    = 2000
)

// The fields every submission carries besides the person's e-mail and phone: what a typical
// contact form of a broker's website sends.
const (
	leadFirstName = "Erika"
	leadLastName  = "Mustermann"
	leadNotes     = "Bitte um Rückruf, gern vormittags."
	leadSource    = "website"
	leadMetaURL   = "https://www.example.com/kontakt"
	leadBudget    = "450000"
	leadObjektart = "Eigentumswohnung"
)

// leadFieldsJSON is additionalFields as stored (jsonb, keys sorted as encoding/json writes a map).
const leadFieldsJSON = `{"budget":"` + leadBudget + `","objektart":"` + leadObjektart + `"}`

// person is who one submission is from: a new person (unique e-mail and phone, so the
// submission creates a lead) or one of the existing leads (it merges into that lead).
type person struct {
	email, emailKey string
	phone, phoneKey string
}

var newSeq, dupSeq atomic.Int64

func newPerson() person {
	n := 10_000_000 + newSeq.Add(1)
	return person{email: fmt.Sprintf("erika.mustermann.%d@example.org", n), emailKey: fmt.Sprintf("erika.mustermann.%d@example.org", n),
		phone: "+49 30 " + strconv.FormatInt(n, 10), phoneKey: "+4930" + strconv.FormatInt(n, 10)}
}

// existingPerson is the person of existing lead i (1 ≤ i ≤ existingLeads), as seedLeads stores it.
func existingPerson(i int64) person {
	n := 10_000_000 + i
	return person{email: fmt.Sprintf("bestand.%d@example.org", i), emailKey: fmt.Sprintf("bestand.%d@example.org", i),
		phone: "+49 40 " + strconv.FormatInt(n, 10), phoneKey: "+4940" + strconv.FormatInt(n, 10)}
}

func dupPerson() person { return existingPerson((dupSeq.Add(1)-1)%dupPersons + 1) }

// nextPerson is the person of the next submission of load body.
func nextPerson(body string) person {
	if body == bodyDup {
		return dupPerson()
	}
	return newPerson()
}

func bodyLabel(body string) string {
	switch body {
	case bodyForm:
		return "urlencoded form, new person"
	case bodyDup:
		return "JSON, duplicate of an open lead"
	}
	return "JSON, new person"
}

// appendJSON appends the JSON body of p's submission, as the JavaScript SDK sends it.
func appendJSON(dst []byte, p person) []byte {
	dst = append(dst, `{"firstName":"`+leadFirstName+`","lastName":"`+leadLastName+`","email":"`...)
	dst = append(dst, p.email...)
	dst = append(dst, `","phone":"`...)
	dst = append(dst, p.phone...)
	dst = append(dst, `","notes":"`+leadNotes+`","source":"`+leadSource+`","additionalFields":`+leadFieldsJSON+
		`,"_meta":{"url":"`+leadMetaURL+`"}}`...)
	return dst
}

// formTail is the constant end of an urlencoded body, before _key.
var formTail = "&notes=" + url.QueryEscape(leadNotes) + "&source=" + leadSource +
	"&additionalFields%5Bbudget%5D=" + leadBudget + "&additionalFields%5Bobjektart%5D=" + leadObjektart +
	"&_meta.url=" + url.QueryEscape(leadMetaURL) + "&_key="

// appendForm appends the urlencoded body of p's submission as a plain HTML form posts it: the
// key in the _key field, additional fields as additionalFields[name].
func appendForm(dst []byte, p person, key string) []byte {
	dst = append(dst, "firstName="+leadFirstName+"&lastName="+leadLastName+"&email="...)
	dst = append(dst, url.QueryEscape(p.email)...)
	dst = append(dst, "&phone="...)
	dst = append(dst, url.QueryEscape(p.phone)...)
	dst = append(dst, formTail...)
	return append(dst, url.QueryEscape(key)...)
}

// intakeSpec is the server side's request of load body: JSON with X-API-Key (as the SDK sends
// it) or an urlencoded form with _key; both from a page of benchOrigin.
func intakeSpec(body string) reqSpec {
	s := reqSpec{method: http.MethodPost, path: intakePath, want: http.StatusCreated}
	if body == bodyForm {
		s.headers = func(*benchKey) [][2]string {
			return [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}, {"Origin", benchOrigin},
				{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}}
		}
		s.body = func(dst []byte, k *benchKey) []byte { return appendForm(dst, newPerson(), k.secret) }
		return s
	}
	s.headers = func(k *benchKey) [][2]string {
		return [][2]string{{"Content-Type", "application/json"}, {"X-API-Key", k.secret}, {"Origin", benchOrigin},
			{"Accept", "application/json"}}
	}
	s.body = func(dst []byte, _ *benchKey) []byte { return appendJSON(dst, nextPerson(body)) }
	return s
}

// seedLeads gives the company existingLeads open intake leads in stage new, owned by the user,
// each with the fields a submission carries (so that merging a duplicate only appends its notes).
func seedLeads(ctx context.Context, owner *sql.DB, company, user uuid.UUID) error {
	_, err := owner.ExecContext(ctx, `
INSERT INTO leads (id, company_id, created_at, updated_at, version, first_name, last_name, email, email_key,
	phone, phone_key, source, notes, additional_fields, meta_url, stage_id, owner_id, converted, test, submissions, origin)
SELECT gen_random_uuid(), $1, t, t, 1, $3, $4, 'bestand.' || i || '@example.org', 'bestand.' || i || '@example.org',
	'+49 40 ' || (10000000 + i), '+4940' || (10000000 + i), $5, '', $6::jsonb, $7,
	(SELECT id FROM lead_stages WHERE company_id = $1 AND key = 'new'), $2, false, false, 1, 'intake'
FROM generate_series(1, $8::int) i, LATERAL (SELECT now() - (($8::int - i) || ' minutes')::interval AS t) ts`,
		company, user, leadFirstName, leadLastName, leadSource, leadFieldsJSON, leadMetaURL, existingLeads)
	return err
}

// checkIntake posts one submission of each body type with the check key and returns the quota
// the server announces.
func checkIntake(ctx context.Context, addr string, fx fixture) (quota, error) {
	var q quota
	for _, body := range []string{bodyJSON, bodyForm} {
		spec := intakeSpec(body)
		k := &benchKey{secret: fx.checkKey}
		req, err := http.NewRequestWithContext(ctx, spec.method, "http://"+addr+spec.path, bytes.NewReader(spec.body(nil, k)))
		if err != nil {
			return q, err
		}
		for _, h := range spec.headers(k) {
			req.Header.Set(h[0], h[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return q, fmt.Errorf("POST %s: %w", intakePath, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != spec.want || string(b) != "{}" {
			return q, fmt.Errorf("POST %s (%s): %d %s, want %d {}", intakePath, body, resp.StatusCode, b, spec.want)
		}
		q = quotaOf(resp.Header)
	}
	http.DefaultClient.CloseIdleConnections()
	if q.limit <= 0 {
		return q, fmt.Errorf("POST %s announced no quota", intakePath)
	}
	return q, nil
}
