// Package search tests GET /search: folding (Müller, Mueller, mueller@), policy numbers, the text
// of uploaded PDFs, ranking, types and limit, visibility, and the error answers.
package search

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/pdftest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type hit struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Subtitle  *string `json:"subtitle"`
	ContactID *string `json:"contactId"`
	Highlight string  `json:"highlight"`
	Score     float64 `json:"score"`
}

type idOnly struct {
	ID string `json:"id"`
}

// search runs GET /search?q=q&extra with key and returns the hits (200 or the test fails).
func search(t *testing.T, env *apitest.Env, key, q, extra string) []hit {
	t.Helper()
	path := "/search?q=" + url.QueryEscape(q)
	if extra != "" {
		path += "&" + extra
	}
	var body struct{ Data []hit }
	r := env.Do(t, apitest.Request{Path: path, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	r.Decode(t, &body)
	return body.Data
}

// ids are the ids of hits of type typ, in rank order.
func ids(hits []hit, typ string) []string {
	var out []string
	for _, h := range hits {
		if h.Type == typ {
			out = append(out, h.ID)
		}
	}
	return out
}

func contains(list []string, id string) bool {
	for _, s := range list {
		if s == id {
			return true
		}
	}
	return false
}

func contact(t *testing.T, env *apitest.Env, key, first, last, email string) string {
	t.Helper()
	body := map[string]any{"type": "private", "firstName": first, "lastName": last}
	if email != "" {
		body["email"] = email
	}
	return apitest.Create[idOnly](t, env, key, "/contacts", body).ID
}

func insurerID(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	var body struct{ Data []idOnly }
	r := env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: key})
	r.Decode(t, &body)
	if r.Status != 200 || len(body.Data) != 1 {
		t.Fatalf("insurer 5501: %d %s", r.Status, r.Body)
	}
	return body.Data[0].ID
}

func contract(t *testing.T, env *apitest.Env, key, contactID, insurer, policy string) string {
	t.Helper()
	return apitest.Create[idOnly](t, env, key, "/contracts", map[string]any{"contactId": contactID, "insurerId": insurer,
		"policyNumber": policy, "type": "130", "status": "active"}).ID
}

// textPDF is a one-page PDF whose text layer says text (Helvetica, WinAnsi: Latin-1 letters
// such as ü as octal escapes).
func textPDF(text string) []byte {
	var esc strings.Builder
	for _, r := range text {
		switch {
		case r == '(' || r == ')' || r == '\\':
			esc.WriteString(`\` + string(r))
		case r > 127 && r < 256:
			fmt.Fprintf(&esc, `\%03o`, r)
		default:
			esc.WriteRune(r)
		}
	}
	content := "BT /F1 12 Tf 72 712 Td (" + esc.String() + ") Tj ET"
	return pdftest.Hand("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
}

// upload files content as filename with contact and returns the document's id.
func upload(t *testing.T, env *apitest.Env, key, contactID, filename string, content []byte) string {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("type", "policy")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(content)
	_ = w.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contactID + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var d idOnly
	r.Decode(t, &d)
	return d.ID
}

// Catches: folding that differs between the stored text and the query (ü kept on one side,
// written out on the other), unaccent missing, an e-mail fragment with "@" not matching.
func TestSearch_Folding(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	anna := contact(t, env, co.Secret, "Anna", "Müller", "mueller@example.de")
	hans := contact(t, env, co.Secret, "Hans", "MUELLER", "")
	jose := contact(t, env, co.Secret, "José", "Groß", "")
	other := contact(t, env, co.Secret, "Anna", "Schmidt", "schmidt@example.de")

	for _, q := range []string{"Müller", "Mueller", "mueller", "MÜLLER"} {
		got := ids(search(t, env, co.Secret, q, "types=contact"), "contact")
		if !contains(got, anna) || !contains(got, hans) || contains(got, other) {
			t.Errorf("q=%s: contacts %v, want Anna and Hans Müller (%s, %s) and not %s", q, got, anna, hans, other)
		}
	}
	got := search(t, env, co.Secret, "mueller@", "types=contact")
	if len(got) != 1 || got[0].ID != anna || got[0].Highlight != "«mueller@example.de»" {
		t.Errorf("q=mueller@: %+v, want Anna alone, her e-mail marked", got)
	}
	got = search(t, env, co.Secret, "jose gross", "")
	if len(got) != 1 || got[0].ID != jose || got[0].Highlight != "«José» «Groß»" || got[0].Score != 1 {
		t.Errorf("q=jose gross: %+v, want José Groß, both words marked, score 1", got)
	}
	got = search(t, env, co.Secret, "Müller", "types=contact&limit=50")
	for _, h := range got {
		if h.ID == anna && h.Highlight != "Anna «Müller»" {
			t.Errorf("highlight %q, want Anna «Müller»", h.Highlight)
		}
		if h.ID == anna && (h.ContactID == nil || *h.ContactID != anna || h.Subtitle == nil || *h.Subtitle != "mueller@example.de") {
			t.Errorf("hit %+v: contactId is the contact, subtitle its e-mail", h)
		}
	}
}

// Catches: an exact name ranked below a longer partial one (score by substring alone), ties
// ordered by chance.
func TestSearch_Ranking(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	partial := contact(t, env, co.Secret, "Anna", "Müllerschön-Bergmann", "")
	exact := contact(t, env, co.Secret, "Anna", "Müller", "")
	got := search(t, env, co.Secret, "Anna Müller", "")
	if len(got) != 2 || got[0].ID != exact || got[1].ID != partial {
		t.Fatalf("ranking %+v, want %s (exact) before %s", got, exact, partial)
	}
	if got[0].Score != 1 || got[1].Score >= got[0].Score || got[1].Score <= 0 {
		t.Errorf("scores %v, %v: want 1 for the exact name, less but above 0 for the partial", got[0].Score, got[1].Score)
	}
}

// Catches: a policy number typed with other separators not finding its contract, a partial
// number scored like the whole, and the contract's contactId missing.
func TestSearch_PolicyNumber(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ins := insurerID(t, env, co.Secret)
	owner := contact(t, env, co.Secret, "Paula", "Police", "")
	k := contract(t, env, co.Secret, owner, ins, "HR-123 456/7")
	contract(t, env, co.Secret, owner, ins, "XY-999")
	for _, q := range []string{"HR-123 456/7", "hr1234567", "HR 123-456-7", "123456"} {
		got := search(t, env, co.Secret, q, "types=contract")
		if len(got) != 1 || got[0].ID != k || got[0].ContactID == nil || *got[0].ContactID != owner {
			t.Errorf("q=%s: %+v, want the contract %s of %s", q, got, k, owner)
			continue
		}
		if whole := q != "123456"; whole != (got[0].Score == 1) {
			t.Errorf("q=%s: score %v (1 only for the whole number)", q, got[0].Score)
		}
		if got[0].Subtitle == nil || !strings.Contains(*got[0].Subtitle, "Hausrat") {
			t.Errorf("q=%s: subtitle %v, want insurer and type label", q, got[0].Subtitle)
		}
	}
	en := env.Do(t, apitest.Request{Path: "/search?q=hr1234567&types=contract", Key: co.Secret,
		Header: map[string]string{"Accept-Language": "en"}})
	if !strings.Contains(string(en.Body), "household") && !strings.Contains(string(en.Body), "Household") {
		t.Errorf("Accept-Language en: %s, want the English type label", en.Body)
	}
	if got := search(t, env, co.Secret, "12", "types=contract"); len(got) != 0 {
		t.Errorf("q=12: %+v, want none (a policy key of fewer than three characters matches nothing)", got)
	}
}

// Catches: the text layer not extracted at upload (or not searched), a document found only by
// its filename, the German stemming not applied, the highlight not a marked passage.
func TestSearch_DocumentText(t *testing.T) {
	t.Parallel()
	if _, err := testsvc.Poppler(context.Background()); err != nil {
		t.Fatal(err) // the server runs pdftotext from PATH
	}
	env := apitest.New(t)
	co := env.NewCompany(t)
	owner := contact(t, env, co.Secret, "Doris", "Dokument", "")
	doc := upload(t, env, co.Secret, owner, "scan-0815.pdf",
		textPDF("Versicherungsschein für Herrn Müller: Elementarschäden sind mitversichert."))
	blank := upload(t, env, co.Secret, owner, "leer.pdf", apitest.PDF)

	for _, q := range []string{"Elementarschäden", "elementarschaeden", "Elementarschaden mitversichert", "Versicherungsscheine"} {
		got := search(t, env, co.Secret, q, "types=document")
		if len(got) != 1 || got[0].ID != doc {
			t.Errorf("q=%s: %+v, want the scanned document %s", q, got, doc)
			continue
		}
		if !strings.Contains(got[0].Highlight, "«") || got[0].Title != "scan-0815.pdf" {
			t.Errorf("q=%s: %+v, want a marked passage and the filename as title", q, got[0])
		}
	}
	got := search(t, env, co.Secret, "Mueller", "types=document")
	if len(got) != 1 || !strings.Contains(got[0].Highlight, "«Müller") {
		t.Errorf("q=Mueller: %+v, want the passage with «Müller» marked", got)
	}
	got = search(t, env, co.Secret, "leer", "types=document")
	if len(got) != 1 || got[0].ID != blank || got[0].Highlight != "«leer.pdf»" {
		t.Errorf("q=leer: %+v, want the PDF without text by its filename", got)
	}
	if got := search(t, env, co.Secret, "Hausrat", "types=document"); len(got) != 0 {
		t.Errorf("q=Hausrat: %+v, want none", got)
	}
}

// Catches: types ignored or a branch left out, plural names refused, limit not applied to the
// merged list. The query has a digit ("1", too short to be a word: the rest matches the names),
// or no contract would be searched (TestSearch_ContractsNeedADigit).
func TestSearch_TypesAndLimit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ins := insurerID(t, env, co.Secret)
	c := contact(t, env, co.Secret, "Kai", "Quaxwell", "")
	contract(t, env, co.Secret, c, ins, "QUAXWELL-1")
	upload(t, env, co.Secret, c, "quaxwell.pdf", apitest.PDF)
	l := apitest.Create[idOnly](t, env, co.Secret, "/leads", map[string]any{"firstName": "Lea", "lastName": "Quaxwell", "email": "lea@example.org"}).ID

	all := search(t, env, co.Secret, "quaxwell 1", "")
	seen := map[string]bool{}
	for _, h := range all {
		seen[h.Type] = true
		if h.Type == "lead" && (h.ID != l || h.ContactID != nil) {
			t.Errorf("lead hit %+v, want %s without contact", h, l)
		}
	}
	if len(all) != 4 || len(seen) != 4 {
		t.Fatalf("all types: %+v, want one of each", all)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Score > all[i-1].Score {
			t.Errorf("not ranked: %+v", all)
		}
	}
	for extra, want := range map[string]string{"types=lead": "lead", "types=contracts": "contract", "types=document,documents": "document"} {
		got := search(t, env, co.Secret, "quaxwell 1", extra)
		if len(got) != 1 || got[0].Type != want {
			t.Errorf("%s: %+v, want one %s", extra, got, want)
		}
	}
	if got := search(t, env, co.Secret, "quaxwell", "types=contact,lead&limit=1"); len(got) != 1 {
		t.Errorf("limit=1: %d hits", len(got))
	}
}

// Catches: a branch that reads outside the request's visibility (an agent finding a
// colleague's contact, lead, contract or document) or another company's rows.
func TestSearch_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, other := env.NewCompany(t), env.NewCompany(t)
	agent := env.NewUser(t, co, "agent")
	agentKey := co.UserKey(t, agent)
	ins := insurerID(t, env, co.Secret)

	mine := contact(t, env, agentKey, "Zora", "Zwirbel", "")
	theirs := contact(t, env, co.Secret, "Zeno", "Zwirbel", "")
	contract(t, env, agentKey, mine, ins, "ZW-100-1")
	contract(t, env, co.Secret, theirs, ins, "ZW-100-2")
	upload(t, env, agentKey, mine, "zwirbel-a.pdf", apitest.PDF)
	upload(t, env, co.Secret, theirs, "zwirbel-b.pdf", apitest.PDF)
	apitest.Create[idOnly](t, env, agentKey, "/leads", map[string]any{"firstName": "Zita", "lastName": "Zwirbel", "email": "zita@example.org"})
	apitest.Create[idOnly](t, env, co.Secret, "/leads", map[string]any{"firstName": "Zeus", "lastName": "Zwirbel", "email": "zeus@example.org"})
	contact(t, env, other.Secret, "Zola", "Zwirbel", "")

	count := func(hits []hit) map[string]int {
		m := map[string]int{}
		for _, h := range hits {
			m[h.Type]++
		}
		return m
	}
	admin := count(append(search(t, env, co.Secret, "zwirbel", "limit=50"), search(t, env, co.Secret, "zw100", "limit=50")...))
	agents := count(append(search(t, env, agentKey, "zwirbel", "limit=50"), search(t, env, agentKey, "zw100", "limit=50")...))
	for _, typ := range []string{"contact", "lead", "contract", "document"} {
		if admin[typ] != 2 || agents[typ] != 1 {
			t.Errorf("%s: admin %d (want 2), agent %d (want 1)", typ, admin[typ], agents[typ])
		}
	}
	for _, h := range search(t, env, agentKey, "zwirbel", "limit=50") {
		if h.Type == "lead" && h.Title != "Zita Zwirbel" || h.Type != "lead" && (h.ContactID == nil || *h.ContactID != mine) {
			t.Errorf("agent found %+v, not its lead nor of its contact %s", h, mine)
		}
	}
	if got := search(t, env, other.Secret, "zwirbel", "limit=50"); len(got) != 1 || got[0].Title != "Zola Zwirbel" {
		t.Errorf("other company: %+v, want its own contact only", got)
	}
}

// Catches: a parameter check missing or reported alone, a 500 on text that is syntax to the
// text search or LIKE (quotes, backslashes, & | ! :*, % _), a NUL in the query (refused by the
// server's input guard for every query parameter: 422 invalid_encoding).
func TestSearch_Errors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	contact(t, env, co.Secret, "O'Brien", `Back\slash`, "")
	long := strings.Repeat("x", 201)
	cases := []apitest.Case{
		{Name: "no credential", Method: "GET", Path: "/search?q=ab", Status: 401},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "leads:read"), Method: "GET", Path: "/search?q=ab", Status: 403, Problem: "insufficient_scope"},
		{Name: "q missing", Key: co.Secret, Method: "GET", Path: "/search", Status: 422, Check: apitest.FieldErrors("q:required")},
		{Name: "q of one character", Key: co.Secret, Method: "GET", Path: "/search?q=a", Status: 422, Check: apitest.FieldErrors("q:too_short")},
		{Name: "q of one character in spaces", Key: co.Secret, Method: "GET", Path: "/search?q=%20a%20%20", Status: 422, Check: apitest.FieldErrors("q:too_short")},
		{Name: "q of spaces", Key: co.Secret, Method: "GET", Path: "/search?q=%20%20%20", Status: 422, Check: apitest.FieldErrors("q:too_short")},
		{Name: "q too long", Key: co.Secret, Method: "GET", Path: "/search?q=" + long, Status: 422, Check: apitest.FieldErrors("q:too_long")},
		{Name: "q of 200 characters", Key: co.Secret, Method: "GET", Path: "/search?q=" + long[:200], Status: 200},
		{Name: "unknown type", Key: co.Secret, Method: "GET", Path: "/search?q=ab&types=contact,task", Status: 422, Check: apitest.FieldErrors("types:invalid_enum")},
		{Name: "empty type in the list", Key: co.Secret, Method: "GET", Path: "/search?q=ab&types=contact,", Status: 422, Check: apitest.FieldErrors("types:invalid_enum")},
		{Name: "limit zero", Key: co.Secret, Method: "GET", Path: "/search?q=ab&limit=0", Status: 422, Check: apitest.FieldErrors("limit:out_of_range")},
		{Name: "limit 51", Key: co.Secret, Method: "GET", Path: "/search?q=ab&limit=51", Status: 422, Check: apitest.FieldErrors("limit:out_of_range")},
		{Name: "limit not a number", Key: co.Secret, Method: "GET", Path: "/search?q=ab&limit=ten", Status: 422, Check: apitest.FieldErrors("limit:invalid_integer")},
		{Name: "q with a NUL", Key: co.Secret, Method: "GET", Path: "/search?q=ab%00cd", Status: 422, Check: apitest.FieldErrors("q:invalid_encoding")},
		{Name: "every bad parameter at once", Key: co.Secret, Method: "GET", Path: "/search?q=a&types=x&limit=-1", Status: 422,
			Check: apitest.FieldErrorSet("q:too_short", "types:invalid_enum", "limit:out_of_range")},
	}
	for _, q := range []string{`"quoted"`, `O'Brien`, `Back\slash`, `\\`, `a & b | !c:*`, `müll:*`, `!!`, `&|`, `(a`, `<->`,
		`100%`, `__`, `%%`, "ab\tcd\u0085", `'; DROP TABLE contacts; --`, "ab\u200bcd", "😀😀", "a b c d e f g h i j k l m"} {
		cases = append(cases, apitest.Case{Name: "odd q " + fmt.Sprintf("%q", q), Key: co.Secret, Method: "GET",
			Path: "/search?q=" + url.QueryEscape(q), Status: 200})
	}
	env.Run(t, cases)

	got := search(t, env, co.Secret, `O'Brien`, "")
	if len(got) != 1 || got[0].Highlight != "«O'Brien» Back\\slash" {
		t.Errorf("q=O'Brien: %+v", got)
	}
	if got := search(t, env, co.Secret, `back\slash`, ""); len(got) != 1 {
		t.Errorf(`q=back\slash: %+v, want the contact (a backslash is a plain character)`, got)
	}
	if got := search(t, env, co.Secret, `%%`, ""); len(got) != 0 {
		t.Errorf("q=%%%%: %+v, want none (%% is no wildcard)", got)
	}
}
