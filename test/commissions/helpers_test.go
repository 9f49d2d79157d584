package commissions

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// statement is a CommissionStatement as the tests read it.
type statement struct {
	ID           string  `json:"id"`
	Format       string  `json:"format"`
	Status       string  `json:"status"`
	ImportStatus string  `json:"importStatus"`
	InsurerID    *string `json:"insurerId"`
	PeriodFrom   *string `json:"periodFrom"`
	PeriodTo     *string `json:"periodTo"`
	Note         *string `json:"note"`
	EntryCount   int     `json:"entryCount"`
	MatchedCount int     `json:"matchedCount"`
	Total        *string `json:"total"`
	Error        *string `json:"error"`
	Issues       []struct {
		Line int    `json:"line"`
		Code string `json:"code"`
	} `json:"issues"`
}

// entry is a CommissionEntry as the tests read it.
type entry struct {
	ID           string  `json:"id"`
	StatementID  string  `json:"statementId"`
	InsurerID    *string `json:"insurerId"`
	ContractID   *string `json:"contractId"`
	ContactID    *string `json:"contactId"`
	PolicyNumber string  `json:"policyNumber"`
	Type         string  `json:"type"`
	Code         string  `json:"code"`
	Amount       string  `json:"amount"`
	BookedOn     string  `json:"bookedOn"`
	Note         *string `json:"note"`
	MatchedBy    *string `json:"matchedBy"`
	Line         int     `json:"line"`
}

type insurer struct {
	ID       string `json:"id"`
	VUNumber string `json:"vuNumber"`
}

// multipartBody builds a multipart body of fields and, when filename is set, a file.
func multipartBody(t testing.TB, fields map[string]string, filename string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if filename != "" {
		fw, _ := w.CreateFormFile("file", filename)
		_, _ = fw.Write(content)
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

// upload posts a statement.
func upload(t testing.TB, env *apitest.Env, key string, fields map[string]string, name string, content []byte) *apitest.Response {
	t.Helper()
	body, ct := multipartBody(t, fields, name, content)
	return env.Do(t, apitest.Request{Method: "POST", Path: "/commission-statements", Key: key, Body: body,
		Header: map[string]string{"Content-Type": ct}})
}

// mustUpload posts a statement, wants 202 and waits until its parse has ended.
func mustUpload(t testing.TB, env *apitest.Env, key string, fields map[string]string, content []byte) statement {
	t.Helper()
	r := upload(t, env, key, fields, "abrechnung", content)
	if r.Status != 202 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var st statement
	r.Decode(t, &st)
	return await(t, env, key, st.ID)
}

// await polls the statement until its import status is processed or failed (60 s at most).
func await(t testing.TB, env *apitest.Env, key, id string) statement {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := apitest.Get[statement](t, env, key, "/commission-statements/"+id)
		if st.ImportStatus == "processed" || st.ImportStatus == "failed" {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("statement %s is %s after 60 s", id, st.ImportStatus)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// entries reads every entry path lists (following the cursor).
func entries(t testing.TB, env *apitest.Env, key, query string) []entry {
	t.Helper()
	var out []entry
	cursor := ""
	for {
		path := "/commission-entries?limit=100" + query
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		p := apitest.Get[apitest.Page[entry]](t, env, key, path)
		out = append(out, p.Data...)
		if !p.Pagination.HasMore {
			return out
		}
		cursor = p.Pagination.NextCursor
	}
}

func mustInsurer(t testing.TB, env *apitest.Env, key, vu string) insurer {
	t.Helper()
	var body struct{ Data []insurer }
	r := env.Do(t, apitest.Request{Path: "/insurers?vuNumber=" + vu, Key: key})
	r.Decode(t, &body)
	if r.Status != 200 || len(body.Data) != 1 {
		t.Fatalf("insurer %s: %d %s", vu, r.Status, r.Body)
	}
	return body.Data[0]
}

type idOnly struct {
	ID string `json:"id"`
}

// mustContract creates a contact (owned by owner when set) and a contract of it.
func mustContract(t testing.TB, env *apitest.Env, key, insurerID, policy, owner string) (contract, contact string) {
	t.Helper()
	body := map[string]any{"type": "private", "firstName": "Erika", "lastName": "Muster"}
	if owner != "" {
		body["ownerId"] = owner
	}
	ct := apitest.Create[idOnly](t, env, key, "/contacts", body)
	c := apitest.Create[idOnly](t, env, key, "/contracts", map[string]any{"contactId": ct.ID, "insurerId": insurerID,
		"policyNumber": policy, "type": "010", "status": "active", "startDate": "2024-01-01"})
	return c.ID, ct.ID
}

// gdvRec builds a record of layout key (part 1) from technical field names: numbers and
// amounts right-aligned and zero-filled, text left-aligned.
func gdvRec(t testing.TB, key string, vals map[string]string) string {
	t.Helper()
	l := gdv.LayoutFor(key)
	td := l.TD(1)
	b := []rune(strings.Repeat(" ", 256))
	copy(b, []rune(l.Satzart))
	if td.NrPos > 0 {
		b[td.NrPos-1] = rune('0' + td.Nr)
	}
	for tech, v := range vals {
		f := td.Field(tech)
		if f == nil {
			t.Fatalf("%s has no field %s", key, tech)
		}
		r := []rune(v)
		if len(r) > f.Len {
			t.Fatalf("%s: %q longer than %d", tech, v, f.Len)
		}
		if f.Type == gdv.Amount || f.Type == gdv.Numeric {
			r = []rune(strings.Repeat("0", f.Len-len(r)) + v)
		}
		copy(b[f.Pos-1:], r)
	}
	return string(b)
}

// inkasso is an 0400 record: Sollstellungsart soll, booked ddmmyyyy, the commission in cents
// with its sign.
func inkasso(t testing.TB, vu, vsnr, soll, booked string, cents int64) string {
	sign := "+"
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return gdvRec(t, "0400", map[string]string{"VuNr": vu, "VsNr": vsnr, "Sollstellungsart": soll,
		"Buchungsdatum": booked, "GesProvisionsbetragInWE": fmt.Sprint(cents), "Vorzeichen5": sign, "Waehrungsschluessel": "EUR"})
}

// gdvStatement is a GDV Inkasso file: a Vorsatz of vu, the records, a Nachsatz (ASCII only,
// so UTF-8 and ISO-8859-15 agree).
func gdvStatement(t testing.TB, vu string, recs ...string) []byte {
	all := append([]string{gdvRec(t, "0001", map[string]string{"VuNr": vu, "Absender": "Muster Versicherung AG",
		"ErstellungsDatumZeitraumVomZeitraumBis": "0101202531012025"})}, recs...)
	all = append(all, gdvRec(t, "9999", map[string]string{}))
	return []byte(strings.Join(all, "\r\n") + "\r\n")
}

// cents renders an amount in cents as a Decimal string.
func cents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}
