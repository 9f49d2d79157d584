package oauth

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/text/language"

	"github.com/brokerdesk/brokerdesk/policy"
)

// Messages of the pages, German and English (Accept-Language, German by default as the API's
// labels).
type msgKey int

const (
	msgBadRequest msgKey = iota
	msgUnknownClient
	msgBadRedirect
	msgCSRF
	msgTooMany
	msgBadLogin
	msgInternal
)

var messages = map[string]map[msgKey]string{
	"de": {
		msgBadRequest:    "Die Anfrage ist ungültig.",
		msgUnknownClient: "Diese Anwendung ist unbekannt oder deaktiviert.",
		msgBadRedirect:   "Die Rücksprungadresse ist für diese Anwendung nicht registriert.",
		msgCSRF:          "Das Formular ist abgelaufen oder stammt nicht von dieser Seite. Bitte neu laden.",
		msgTooMany:       "Zu viele fehlgeschlagene Anmeldungen. Bitte später erneut versuchen.",
		msgBadLogin:      "E-Mail-Adresse oder Passwort ist falsch.",
		msgInternal:      "Ein interner Fehler ist aufgetreten.",
	},
	"en": {
		msgBadRequest:    "The request is invalid.",
		msgUnknownClient: "This application is unknown or disabled.",
		msgBadRedirect:   "The redirect address is not registered for this application.",
		msgCSRF:          "The form has expired or did not come from this page. Please reload.",
		msgTooMany:       "Too many failed sign-ins. Please try again later.",
		msgBadLogin:      "E-mail address or password is wrong.",
		msgInternal:      "An internal error occurred.",
	},
}

var texts = map[string]map[string]string{
	"de": {"signin": "Anmelden", "email": "E-Mail-Adresse", "password": "Passwort", "wants": "möchte auf Ihr Konto zugreifen",
		"consent": "Zugriff erlauben", "asks": "möchte im Namen von", "for": "für", "scopes": "Folgendes darf die Anwendung:",
		"allow": "Erlauben", "deny": "Ablehnen", "error": "Fehler", "signedin": "Angemeldet als"},
	"en": {"signin": "Sign in", "email": "E-mail address", "password": "Password", "wants": "wants to access your account",
		"consent": "Allow access", "asks": "asks to act on behalf of", "for": "at", "scopes": "The application may:",
		"allow": "Allow", "deny": "Deny", "error": "Error", "signedin": "Signed in as"},
}

var resourceLabels = map[string][2]string{
	"events": {"Ereignisse", "events"}, "webhooks": {"Webhooks", "webhooks"}, "company": {"Firmendaten", "company details"},
	"users": {"Benutzer", "users"}, "contacts": {"Kontakte", "contacts"}, "contacts.sensitive": {"sensible Kontaktdaten", "sensitive contact data"},
	"activities": {"Aktivitäten", "activities"}, "portal": {"Kundenportal", "customer portal"}, "admin": {"Verwaltung", "administration"},
	"documents": {"Dokumente", "documents"}, "contracts": {"Verträge", "contracts"}, "correspondence": {"Korrespondenz", "correspondence"},
	"signatures": {"Signaturen", "signatures"}, "leads": {"Leads", "leads"}, "tasks": {"Aufgaben", "tasks"},
	"appointments": {"Termine", "appointments"}, "offers": {"Angebote", "offers"}, "integrations": {"Integrationen", "integrations"},
	"portfolio": {"Bestand", "portfolio"}, "commissions": {"Provisionen", "commissions"}, "emails": {"E-Mails", "e-mails"},
	"marketing": {"Marketing", "marketing"}, "automations": {"Automatisierungen", "automations"}, "calculators": {"Rechner", "calculators"},
	"advice": {"Beratung", "advice"}, "reports": {"Berichte", "reports"}, "imports": {"Importe", "imports"}, "privacy": {"Datenschutz", "privacy"},
}

// ScopeLabel is the readable label of scope in lang ("Kontakte lesen", "read contacts").
func ScopeLabel(scope, lang string) string {
	res, act, _ := strings.Cut(scope, ":")
	l, ok := resourceLabels[res]
	if !ok {
		return scope
	}
	if lang == "en" {
		verb := map[string]string{"read": "read", "write": "read and change"}[act]
		return verb + " " + l[1]
	}
	verb := map[string]string{"read": "lesen", "write": "lesen und ändern"}[act]
	return l[0] + " " + verb
}

func scopesJSON() string {
	b, _ := json.Marshal(policy.Scopes)
	return string(b)
}

var matcher = language.NewMatcher([]language.Tag{language.German, language.English})

// language picks de or en from Accept-Language; German when nothing matches.
func pickLanguage(accept string) string {
	tags, _, _ := language.ParseAcceptLanguage(accept)
	if len(tags) == 0 {
		return "de"
	}
	_, i, _ := matcher.Match(tags...)
	if i == 1 {
		return "en"
	}
	return "de"
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>BrokerDesk – {{.Title}}</title>
<style>body{font-family:sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}
input{width:100%;padding:.4rem}button{margin:1rem .5rem 0 0;padding:.5rem 1rem}.err{color:#a00}</style></head><body>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="err" id="error" role="alert">{{.Error}}</p>{{end}}
{{if eq .Kind "login"}}
<p><strong id="client-name">{{.ClientName}}</strong> {{.T.wants}}.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}"><input type="hidden" name="action" value="login">
<label for="email">{{.T.email}}</label><input id="email" name="email" type="email" autocomplete="username" value="{{.Email}}" required>
<label for="password">{{.T.password}}</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button id="signin" type="submit">{{.T.signin}}</button>
</form>
{{else if eq .Kind "consent"}}
<p><strong id="client-name">{{.ClientName}}</strong> {{.T.asks}} <strong id="user-email">{{.UserEmail}}</strong> {{.T.for}} <strong id="company-name">{{.CompanyName}}</strong>.</p>
<p>{{.T.scopes}}</p>
<ul id="scopes">{{range .Scopes}}<li data-scope="{{.Scope}}">{{.Label}}</li>{{end}}</ul>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<button id="allow" type="submit" name="action" value="allow">{{.T.allow}}</button>
<button id="deny" type="submit" name="action" value="deny">{{.T.deny}}</button>
</form>
{{end}}
</body></html>
`))

type scopeItem struct{ Scope, Label string }

type pageData struct {
	Lang, Title, Kind, Error, Action, CSRF, Email string
	ClientName, UserEmail, CompanyName            string
	Scopes                                        []scopeItem
	T                                             map[string]string
}

func render(w http.ResponseWriter, status int, d pageData) {
	d.T = texts[d.Lang]
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("Content-Language", d.Lang)
	w.WriteHeader(status)
	_ = page.Execute(w, d)
}

func (s *Server) errorPage(w http.ResponseWriter, lang string, status int, m msgKey) {
	render(w, status, pageData{Lang: lang, Title: texts[lang]["error"], Kind: "error", Error: messages[lang][m]})
}

func (s *Server) loginPage(w http.ResponseWriter, lang string, status int, cl *Client, u *url.URL, csrf, email string, m msgKey) {
	d := pageData{Lang: lang, Title: texts[lang]["signin"], Kind: "login", Action: u.RequestURI(), CSRF: csrf,
		Email: email, ClientName: cl.c.Name}
	if status != http.StatusOK {
		d.Error = messages[lang][m]
	}
	render(w, status, d)
}

func (s *Server) consentPage(w http.ResponseWriter, lang string, cl *Client, u *loginUser, scopes []string, url *url.URL, csrf string) {
	d := pageData{Lang: lang, Title: texts[lang]["consent"], Kind: "consent", Action: url.RequestURI(), CSRF: csrf,
		ClientName: cl.c.Name, UserEmail: u.Email, CompanyName: u.CompanyName}
	for _, sc := range scopes {
		d.Scopes = append(d.Scopes, scopeItem{Scope: sc, Label: ScopeLabel(sc, lang)})
	}
	render(w, http.StatusOK, d)
}
