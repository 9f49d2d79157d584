package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/sdk"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// formPage is a website's contact form posting straight to the intake: no script at all. The
// key travels as _key, _redirect brings the visitor back to the site's thank-you page, and
// _meta.url, when the site sets it, is written into the page by the site's own server.
var formPage = template.Must(template.New("form").Parse(`<!DOCTYPE html>
<html lang="de"><head><meta charset="utf-8"><title>Kontakt</title></head><body>
<form id="f" method="post" action="{{.Action}}" enctype="{{.Enctype}}">
  <input id="firstName" name="firstName">
  <input id="lastName" name="lastName">
  <input id="email" name="email" type="email">
  <input id="phone" name="phone" type="tel">
  <select id="source" name="source"><option value="website" selected>Website</option><option value="event">Messe</option></select>
  <textarea id="notes" name="notes"></textarea>
  <input id="interest" name="additionalFields.interest">
  {{if .File}}<input id="file" name="file" type="file">{{end}}
  <input type="hidden" name="_key" value="{{.Key}}">
  <input type="hidden" name="_redirect" value="{{.Redirect}}">
  {{if .MetaURL}}<input type="hidden" name="_meta.url" value="{{.MetaURL}}">{{end}}
  <button id="send" type="submit">Senden</button>
</form></body></html>`))

type formData struct {
	Action, Enctype, Key, Redirect, MetaURL string
	File                                    bool
}

// site is the brokerage's website on its own origin: the plain form (/form, /upload), the
// SDK example page (/sdk) and the thank-you page.
func site(t *testing.T, apiBase, key string) string {
	t.Helper()
	var base string
	mux := http.NewServeMux()
	form := func(enctype string, file, meta bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			d := formData{Action: apiBase + "/api/public/leads", Enctype: enctype, Key: key,
				Redirect: base + "/thanks", File: file}
			if meta {
				d.MetaURL = base + r.URL.RequestURI()
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if err := formPage.Execute(w, d); err != nil {
				t.Errorf("form page: %v", err)
			}
		}
	}
	mux.HandleFunc("/form", form("application/x-www-form-urlencoded", false, true))
	mux.HandleFunc("/upload", form("multipart/form-data", true, false))
	mux.HandleFunc("/thanks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html lang="de"><head><meta charset="utf-8"><title>Danke</title></head>`+
			`<body><h1 id="thanks">Vielen Dank!</h1></body></html>`)
	})
	// The SDK example page as shipped, pointed at this API and key.
	page := strings.NewReplacer("https://api.brokerdesk.example", apiBase, "pk_live_YOUR_KEY", key).Replace(string(sdk.Example()))
	if page == string(sdk.Example()) {
		t.Fatalf("example.html no longer holds the placeholders the test replaces")
	}
	mux.HandleFunc("/sdk", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	// The same page with its optional _redirect field switched on.
	const optional = `<!-- Optional: where to go after success. <input type="hidden" name="_redirect" value="https://www.example.com/danke"> -->`
	if !strings.Contains(page, optional) {
		t.Fatalf("example.html no longer holds the optional _redirect field")
	}
	mux.HandleFunc("/sdk-redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.Replace(page, optional, `<input type="hidden" name="_redirect" value="`+base+`/thanks">`, 1))
	})
	base = servePages(t, mux)
	return base
}

func TestBrowser_LeadIntake(t *testing.T) {
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := co.Key(t, operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvLive,
		UserID: &co.Admin.ID, AllowedDomains: []string{"localhost"}}).Secret
	apiBase := serveAPI(t, env)
	siteBase := site(t, apiBase, key)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	browser := newBrowser(t, ctx)

	t.Run("plain form urlencoded redirects back and stores the lead", func(t *testing.T) {
		tab, _ := newTab(t, browser)
		do(t, tab,
			chromedp.Navigate(siteBase+"/form?kampagne=herbst"),
			chromedp.SendKeys(chromedp.CSS("#firstName"), "Jürgen"),
			chromedp.SendKeys(chromedp.CSS("#lastName"), "Müller-Lüdenscheidt"),
			chromedp.SendKeys(chromedp.CSS("#email"), "juergen.form@example.com"),
			chromedp.SendKeys(chromedp.CSS("#phone"), "0170 1234567"),
			chromedp.SendKeys(chromedp.CSS("#notes"), "Bitte Rückruf ab 17 Uhr & nicht vor 9"),
			chromedp.SendKeys(chromedp.CSS("#interest"), "Berufsunfähigkeit"),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS("#thanks")),
		)
		if loc := run(t, tab, chromedp.Location()); loc != siteBase+"/thanks" {
			t.Errorf("landed on %s, want %s/thanks", loc, siteBase)
		}
		l := leadByEmail(t, env, co.ID, "juergen.form@example.com")
		if l.FirstName != "Jürgen" || l.LastName != "Müller-Lüdenscheidt" {
			t.Errorf("name %q %q, want Jürgen Müller-Lüdenscheidt", l.FirstName, l.LastName)
		}
		if deref(l.Phone) != "0170 1234567" || deref(l.Source) != "website" || l.Notes != "Bitte Rückruf ab 17 Uhr & nicht vor 9" {
			t.Errorf("phone %q, source %q, notes %q", deref(l.Phone), deref(l.Source), l.Notes)
		}
		if want := map[string]string{"interest": "Berufsunfähigkeit"}; !reflect.DeepEqual(l.AdditionalFields, want) {
			t.Errorf("additionalFields %v, want %v", l.AdditionalFields, want)
		}
		// A plain form has no script: metaUrl is what the site wrote into its _meta.url field.
		if want := siteBase + "/form?kampagne=herbst"; deref(l.MetaURL) != want {
			t.Errorf("metaUrl %q, want %q", deref(l.MetaURL), want)
		}
		if l.Test {
			t.Errorf("stored as a test lead")
		}
	})

	t.Run("plain form multipart with a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "Gehaltsnachweis.pdf")
		content := []byte("%PDF-1.4\n% Jürgen\n")
		if err := os.WriteFile(file, content, 0o600); err != nil {
			t.Fatal(err)
		}
		tab, _ := newTab(t, browser)
		do(t, tab,
			chromedp.Navigate(siteBase+"/upload"),
			chromedp.SendKeys(chromedp.CSS("#firstName"), "Jürgen"),
			chromedp.SendKeys(chromedp.CSS("#lastName"), "Müller-Lüdenscheidt"),
			chromedp.SendKeys(chromedp.CSS("#email"), "juergen.upload@example.com"),
			chromedp.SetValue(chromedp.CSS("#source"), "event"),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS("#thanks")),
		)
		if loc := run(t, tab, chromedp.Location()); loc != siteBase+"/thanks" {
			t.Errorf("landed on %s, want %s/thanks", loc, siteBase)
		}
		l := leadByEmail(t, env, co.ID, "juergen.upload@example.com")
		if l.FirstName != "Jürgen" || l.LastName != "Müller-Lüdenscheidt" || deref(l.Source) != "event" {
			t.Errorf("name %q %q, source %q", l.FirstName, l.LastName, deref(l.Source))
		}
		// No _meta.url field and no script: the lead has no page address.
		if l.MetaURL != nil {
			t.Errorf("metaUrl %q, want none", *l.MetaURL)
		}
		files := attachments(t, env, co.ID, l.ID)
		if len(files) != 1 || files[0].Filename != "Gehaltsnachweis.pdf" || !bytes.Equal(files[0].Content, content) {
			t.Errorf("attachments %+v, want Gehaltsnachweis.pdf with its %d bytes", files, len(content))
		}
	})

	t.Run("SDK form submits with the page address", func(t *testing.T) {
		tab, _ := newTab(t, browser)
		// the query and fragment stay in the browser (issue 20 item 9: the SDK sent
		// location.href, a visitor's e-mail in a link and tokens included)
		page := siteBase + "/sdk"
		address := page + "?utm_source=newsletter&email=juergen%40example.com#access_token=secret"
		do(t, tab,
			chromedp.Navigate(address),
			chromedp.SendKeys(chromedp.CSS(`input[name="firstName"]`), "Jürgen"),
			chromedp.SendKeys(chromedp.CSS(`input[name="lastName"]`), "Müller-Lüdenscheidt"),
			chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), "juergen.sdk@example.com"),
			chromedp.SetValue(chromedp.CSS(`select[name="additionalFields.interest"]`), "Altersvorsorge"),
			chromedp.SendKeys(chromedp.CSS(`textarea[name="notes"]`), "Über das Formular"),
			chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		)
		run(t, tab, chromedp.Poll[bool](`document.getElementById('status').textContent.length > 0`))
		status := run(t, tab, chromedp.Text(chromedp.CSS("#status")))
		if !strings.Contains(status, "Vielen Dank") {
			t.Fatalf("status %q, want the page's thank-you text", status)
		}
		l := leadByEmail(t, env, co.ID, "juergen.sdk@example.com")
		if l.FirstName != "Jürgen" || l.LastName != "Müller-Lüdenscheidt" || l.Notes != "Über das Formular" {
			t.Errorf("name %q %q, notes %q", l.FirstName, l.LastName, l.Notes)
		}
		if deref(l.MetaURL) != page {
			t.Errorf("metaUrl %q, want the page's origin and path %q (set by the SDK, no query or fragment)", deref(l.MetaURL), page)
		}
		if deref(l.Source) != "website" || !reflect.DeepEqual(l.AdditionalFields, map[string]string{"interest": "Altersvorsorge"}) {
			t.Errorf("source %q, additionalFields %v", deref(l.Source), l.AdditionalFields)
		}
	})

	t.Run("SDK form with _redirect navigates after success", func(t *testing.T) {
		tab, _ := newTab(t, browser)
		do(t, tab,
			chromedp.Navigate(siteBase+"/sdk-redirect"),
			chromedp.SendKeys(chromedp.CSS(`input[name="firstName"]`), "Jürgen"),
			chromedp.SendKeys(chromedp.CSS(`input[name="lastName"]`), "Müller-Lüdenscheidt"),
			chromedp.SendKeys(chromedp.CSS(`input[name="phone"]`), "+49 221 987654"),
			chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("#thanks")),
		)
		if loc := run(t, tab, chromedp.Location()); loc != siteBase+"/thanks" {
			t.Errorf("landed on %s, want %s/thanks", loc, siteBase)
		}
		var found []lead
		for _, l := range leads(t, env, co.ID) {
			if deref(l.Phone) == "+49 221 987654" {
				found = append(found, l)
			}
		}
		if len(found) != 1 || deref(found[0].MetaURL) != siteBase+"/sdk-redirect" || found[0].Email != nil {
			t.Fatalf("leads with the phone: %+v, want one from %s/sdk-redirect", found, siteBase)
		}
	})

	t.Run("SDK submit answers: v1 endpoint, unknown key, foreign origin", func(t *testing.T) {
		tab, _ := newTab(t, browser)
		do(t, tab, chromedp.Navigate(siteBase+"/sdk"))
		type outcome struct {
			OK bool `json:"ok"`
			R  struct {
				Status     int               `json:"status"`
				Error      string            `json:"error"`
				Body       map[string]string `json:"body"`
				Violations []violation       `json:"violations"`
			} `json:"r"`
		}
		submit := func(key, endpoint, fields string) outcome {
			t.Helper()
			js := run(t, tab, chromedp.Evaluate[string](fmt.Sprintf(`BrokerDesk.init({key: %q, endpoint: %q}).submit(%s).then(
				function (r) { return JSON.stringify({ok: true, r: r}); },
				function (e) { return JSON.stringify({ok: false, r: e}); })`, key, endpoint, fields), chromedp.EvalAwaitPromise))
			var o outcome
			if err := json.Unmarshal([]byte(js), &o); err != nil {
				t.Fatalf("submit: %v (%s)", err, js)
			}
			return o
		}
		legacy, v1 := apiBase+"/api/public/leads", apiBase+"/api/public/v1/leads/intake"
		fields := `{firstName: "Jürgen", lastName: "Müller-Lüdenscheidt", email: "juergen.v1@example.com"}`
		if o := submit(key, v1, fields); !o.OK || o.R.Status != 201 || o.R.Body["status"] != "created" {
			t.Errorf("v1 intake: %+v, want resolved 201 {status: created}", o)
		}
		if l := leadByEmail(t, env, co.ID, "juergen.v1@example.com"); deref(l.MetaURL) != siteBase+"/sdk" {
			t.Errorf("v1 lead metaUrl %q, want %s/sdk", deref(l.MetaURL), siteBase)
		}
		if o := submit("pk_live_unknown", legacy, fields); o.OK || o.R.Status != 401 || o.R.Error != "Invalid or inactive API key" {
			t.Errorf("unknown key: %+v, want rejected 401 with the server's error", o)
		}
		// co.Publishable allows example.com only: a page on localhost may not post with it.
		if o := submit(co.Publishable, legacy, fields); o.OK || o.R.Status != 403 || o.R.Error == "" {
			t.Errorf("foreign origin: %+v, want rejected 403 with the server's error", o)
		}
	})

	t.Run("SDK validates exactly as the server", func(t *testing.T) {
		// Another company's key: these posts must not touch the leads counted above.
		other := env.NewCompany(t)
		tab, _ := newTab(t, browser)
		do(t, tab, chromedp.Navigate(siteBase+"/sdk"))
		for _, body := range parityCases() {
			for _, lang := range []string{"de", "en"} {
				js := run(t, tab, chromedp.Evaluate[string](`JSON.stringify(BrokerDesk.validate(`+body+`, "`+lang+`"))`))
				var got []violation
				if err := json.Unmarshal([]byte(js), &got); err != nil {
					t.Fatalf("validate %s: %v (%s)", body, err, js)
				}
				test := `{"_test":true,` + strings.TrimPrefix(body, "{")
				if body == "{}" {
					test = `{"_test":true}`
				}
				want := serverViolations(t, apiBase, other.Publishable, lang, test)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %.200s:\n  SDK    %+v\n  server %+v", lang, body, got, want)
				}
			}
		}
	})

	t.Run("SDK shows its validation message and sends nothing", func(t *testing.T) {
		tab, requests := newTab(t, browser)
		before := len(leads(t, env, co.ID))
		do(t, tab,
			chromedp.Navigate(siteBase+"/sdk"),
			chromedp.SendKeys(chromedp.CSS(`input[name="firstName"]`), "Jürgen"),
			chromedp.SendKeys(chromedp.CSS(`input[name="lastName"]`), "Müller-Lüdenscheidt"),
			chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), "juergen@"),
			chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		)
		run(t, tab, chromedp.Poll[bool](`document.querySelector('.error[data-for="email"]').textContent.length > 0`))
		emailMsg := run(t, tab, chromedp.TextContent(chromedp.CSS(`.error[data-for="email"]`)))
		contactMsg := run(t, tab, chromedp.TextContent(chromedp.CSS(`.error[data-for=""]`)))
		want := serverViolations(t, apiBase, key, "de", `{"firstName":"Jürgen","lastName":"Müller-Lüdenscheidt","email":"juergen@"}`)
		if len(want) != 1 || want[0].Field != "email" || emailMsg != want[0].Message {
			t.Errorf("message %q, want the server's %+v", emailMsg, want)
		}
		if contactMsg != "" {
			t.Errorf("form-level message %q, want none (an e-mail was given)", contactMsg)
		}
		if got := requests.to(apiBase + "/api/"); len(got) != 0 {
			t.Errorf("the SDK sent %v, want no request for invalid fields", got)
		}
		if after := len(leads(t, env, co.ID)); after != before {
			t.Errorf("%d leads after the invalid submit, want %d", after, before)
		}
	})
}

// parityCases are submissions on the edges of every rule, as JSON bodies.
func parityCases() []string {
	x := func(n int, s string) string { return strings.Repeat(s, n) }
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf(`"f%d":"v"`, i)
	}
	ok := `"firstName":"Jürgen","lastName":"Müller-Lüdenscheidt"`
	return []string{
		`{}`,
		`{"firstName":"Jürgen"}`,
		`{"firstName":"  ","lastName":"\u00a0Müller\u3000","email":" juergen.parity@example.com\u0085"}`,
		`{"firstName":"\ufeff","lastName":"Müller","email":"juergen.parity@example.com"}`,
		`{` + ok + `,"email":"juergen@"}`,
		`{` + ok + `,"email":"juergen@example"}`,
		`{` + ok + `,"email":"Jürgen Müller <juergen.parity@example.com>"}`,
		`{` + ok + `,"email":"\"juergen\"@example.com"}`,
		`{` + ok + `,"email":"juergen..m@example.com"}`,
		`{` + ok + `,"email":"juergen(kommentar)@example.com"}`,
		`{` + ok + `,"email":"jürgen@müller-lüdenscheidt.de"}`,
		`{` + ok + `,"email":"juergen@[192.168.0.1]"}`,
		`{` + ok + `,"email":"juergen@[01.2.3.4]"}`,
		`{` + ok + `,"email":"juergen@[::1]"}`,
		`{` + ok + `,"email":"juergen@[::ffff:192.168.0.1]"}`,
		`{` + ok + `,"email":"` + x(244, "j") + `@example.com"}`,
		`{` + ok + `,"email":"` + x(243, "j") + `@example.com"}`,
		`{"firstName":"` + x(101, "x") + `","lastName":"` + x(100, "ü") + `","phone":"` + x(51, "1") + `"}`,
		`{"firstName":"` + x(100, "x") + `","lastName":"` + x(100, "ü") + `","phone":"0170 1234567"}`,
		`{"firstName":"` + x(50, "ü") + `","lastName":"Müller","phone":"0170 1234567"}`,
		`{"firstName":42,"lastName":true,"email":{},"phone":["1"],"notes":7}`,
		`{` + ok + `,"phone":4917012345678}`,
		`{` + ok + `,"phone":"0170 1234567","notes":"` + x(10001, "n") + `"}`,
		`{` + ok + `,"phone":"0170 1234567","additionalFields":[]}`,
		`{` + ok + `,"phone":"0170 1234567","additionalFields":{"b":{"c":1},"":"x","a":"` + x(1001, "a") + `","` + x(65, "n") + `":1}}`,
		`{` + ok + `,"phone":"0170 1234567","additionalFields":{` + strings.Join(many, ",") + `}}`,
		`{` + ok + `,"phone":"0170 1234567","additionalFields":{"n":5,"b":true,"z":null," Ort ":" Köln "}}`,
		`{` + ok + `,"phone":"0170 1234567","source":"Newsletter","_test":"1"}`,
		`{` + ok + `,"email":"juergen.parity@example.com","source":" WEBSITE "}`,
	}
}

// violation is one entry of the legacy 400 body.
type violation struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// serverViolations posts body (a JSON object) to the legacy intake as a server would (no
// Origin), with key and Accept-Language lang, and returns the violations: none for a 201.
func serverViolations(t *testing.T, apiBase, key, lang, body string) []violation {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, apiBase+"/api/public/leads", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept-Language", lang)
	resp, err := apitest.Client(t).Do(req) // checked against the OpenAPI document
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusCreated:
		return []violation{}
	case http.StatusBadRequest:
		var b struct {
			Error      string      `json:"error"`
			Violations []violation `json:"violations"`
		}
		if err := json.Unmarshal(raw, &b); err != nil || b.Error != "Validation failed" {
			t.Fatalf("POST %s: 400 body %s", body, raw)
		}
		return b.Violations
	}
	t.Fatalf("POST %s (%s): status %d %s", body, lang, resp.StatusCode, raw)
	return nil
}
