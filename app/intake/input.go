package intake

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent/lead"
)

// Bounds of a submission: lead-intake.md's for names, e-mail and phone; ours for the rest
// (docs/decisions/leads-and-intake.md "Fields"), each at most the lead board's (app/leads), so that whatever
// the intake stores is a valid lead for the API too. The JavaScript SDK (app/sdk) checks the
// same bounds before it sends.
const (
	MaxNameLen       = check.MaxName
	MaxEmailLen      = check.MaxEmail
	MaxPhoneLen      = check.MaxPhone
	MaxNotesLen      = 10000 // leads.MaxNotes is 50,000: a public form needs less
	MaxFields        = 50    // additionalFields per submission
	MaxFieldNameLen  = 64    // characters of an additionalFields name
	MaxFieldValueLen = 1000  // characters of an additionalFields value
	MaxMetaURLLen    = 2048  // bytes; a longer _meta.url is ignored
	MaxRedirectLen   = 2048
	MaxFiles         = 5
	MaxFileSize      = 5 << 20
)

// Submission is one intake request as read from any of the three content types. Strings are
// trimmed and free of NUL characters; absent and empty are the same.
type Submission struct {
	FirstName, LastName string
	Email, Phone        string
	Notes               string
	// Source is an allowed source value or "" (IgnoredSource holds an unknown one: dropped, not
	// an error).
	Source, IgnoredSource string
	AdditionalFields      map[string]string
	MetaURL               string // "" when absent, not an http(s) URL or too long
	Key                   string // _key from the body; the X-API-Key header wins over it
	Redirect              string
	Test                  bool
	Files                 []File

	// problems are what reading found already: a field of the wrong JSON type, a file too large.
	// Validate reports them in field order with the rest.
	problems map[string]violation
}

// File is an uploaded file of a multipart submission.
type File struct {
	Field        string // the form field it came in
	Filename     string
	ContentType  string // sniffed from Content (httpx.SniffType): what is stored and served
	DeclaredType string // what the client claimed; kept in the submission record only
	Content      []byte
}

// violation is one failing field, in a form that message turns into text in either language.
type violation struct {
	Field string
	Code  string
	Max   int
}

func (s *Submission) problem(field, code string, max int) {
	if s.problems == nil {
		s.problems = map[string]violation{}
	}
	if _, ok := s.problems[field]; !ok {
		s.problems[field] = violation{Field: field, Code: code, Max: max}
	}
}

// Field codes. Stable: clients branch on them (v1 `errors[].code`).
const (
	codeRequired           = "required"
	codeTooLong            = "too_long"
	codeInvalidEmail       = "invalid_email"
	codeEmailOrPhone       = "email_or_phone_required"
	codeInvalidType        = "invalid_type"
	codeTooMany            = "too_many_fields"
	codeInvalidName        = "invalid_field_name"
	codeRedirectNotAllowed = "redirect_not_allowed"
	codeFileTooLarge       = "file_too_large"
	codeTooManyFiles       = "too_many_files"
)

// Validate checks s against lead-intake.md and our bounds; allowed are the key's domains, which
// _redirect must point into. It returns *errs.Invalid listing every failing field once, with
// messages in lang, or nil. The e-mail-or-phone rule has field "" (the legacy shape).
func (s *Submission) Validate(allowed []string, lang string) error {
	var out []violation
	add := func(field, code string, max int) { out = append(out, violation{field, code, max}) }
	// field runs the checks of one field unless reading it failed already.
	field := func(name string, check func()) {
		if p, ok := s.problems[name]; ok {
			out = append(out, p)
			return
		}
		check()
	}
	name := func(f, v string) {
		field(f, func() {
			switch {
			case v == "":
				add(f, codeRequired, 0)
			case utf8.RuneCountInString(v) > MaxNameLen:
				add(f, codeTooLong, MaxNameLen)
			}
		})
	}
	name("firstName", s.FirstName)
	name("lastName", s.LastName)
	field("email", func() {
		switch {
		case s.Email == "":
		case utf8.RuneCountInString(s.Email) > MaxEmailLen:
			add("email", codeTooLong, MaxEmailLen)
		case !validEmail(s.Email):
			add("email", codeInvalidEmail, 0)
		}
	})
	field("phone", func() {
		if utf8.RuneCountInString(s.Phone) > MaxPhoneLen {
			add("phone", codeTooLong, MaxPhoneLen)
		}
	})
	_, emailBad := s.problems["email"]
	_, phoneBad := s.problems["phone"]
	if s.Email == "" && s.Phone == "" && !emailBad && !phoneBad {
		add("", codeEmailOrPhone, 0)
	}
	field("notes", func() {
		if utf8.RuneCountInString(s.Notes) > MaxNotesLen {
			add("notes", codeTooLong, MaxNotesLen)
		}
	})
	field("additionalFields", func() {
		if len(s.AdditionalFields) > MaxFields {
			add("additionalFields", codeTooMany, MaxFields)
			return
		}
		names := make([]string, 0, len(s.AdditionalFields))
		for k := range s.AdditionalFields {
			names = append(names, k)
		}
		slices.Sort(names)
		badName := false
		for _, k := range names {
			if !validFieldName(k) {
				if !badName { // once: the field is additionalFields, whatever the names
					add("additionalFields", codeInvalidName, MaxFieldNameLen)
				}
				badName = true
				continue
			}
			if utf8.RuneCountInString(s.AdditionalFields[k]) > MaxFieldValueLen {
				add("additionalFields."+k, codeTooLong, MaxFieldValueLen)
			}
		}
	})
	for _, k := range sortedProblems(s.problems, "additionalFields.") {
		out = append(out, s.problems[k])
	}
	field("_redirect", func() {
		if s.Redirect != "" && !redirectAllowed(s.Redirect, allowed) {
			add("_redirect", codeRedirectNotAllowed, 0)
		}
	})
	for _, k := range sortedProblems(s.problems, fileProblemPrefix) {
		p := s.problems[k]
		p.Field = strings.TrimPrefix(k, fileProblemPrefix)
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil
	}
	return invalid(out, lang)
}

// fileProblemPrefix keeps file problems apart from fields of the same name in problems.
const fileProblemPrefix = "\x00file:"

func sortedProblems(m map[string]violation, prefix string) []string {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// invalid turns violations into the 422 error kind with messages in lang.
func invalid(vs []violation, lang string) *errs.Invalid {
	var v errs.Invalid
	for _, x := range vs {
		v.Add(x.Field, x.Code, message(x, lang))
	}
	return &v
}

// validEmail accepts what check.ValidEmail accepts (a bare address, no display name) when
// its domain has a dot: a website visitor's address is never "name@localhost".
func validEmail(s string) bool {
	if !check.ValidEmail(s) || s != strings.TrimSpace(s) {
		return false
	}
	domain := s[strings.LastIndexByte(s, '@')+1:]
	return strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

// validFieldName: 1 to MaxFieldNameLen characters, no control characters.
func validFieldName(k string) bool {
	n := utf8.RuneCountInString(k)
	if n == 0 || n > MaxFieldNameLen {
		return false
	}
	return strings.IndexFunc(k, unicode.IsControl) < 0
}

// normalizeSource returns the allowed value s names (case and surrounding space ignored), or "".
func normalizeSource(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || lead.SourceValidator(lead.Source(s)) != nil {
		return ""
	}
	return s
}

// clean trims a one-line value (a name, an e-mail address, a phone number, a field name) and
// removes what a visitor cannot have meant and a broker must not be shown: C0 and C1 control
// characters (NUL among them, which PostgreSQL text and jsonb cannot hold) and Unicode format
// characters (category Cf: zero-width characters and bidi controls such as U+202E, which make
// "Anna" display as something else). Tabs and line breaks become spaces.
func clean(s string) string { return strings.TrimSpace(sanitize(s, false)) }

// cleanText is clean for multi-line text (notes, additional field values): line breaks are kept,
// as "\n" (CR LF and CR, which form posts send, become LF).
func cleanText(s string) string { return strings.TrimSpace(sanitize(s, true)) }

func sanitize(s string, lines bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			if lines {
				return '\n'
			}
			return ' '
		case r == '\t':
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}

// isTest reads _test: true, "true" and "1" mark a test lead; anything else does not.
func isTest(s string) bool {
	s = strings.TrimSpace(s)
	return s == "true" || s == "1"
}
