package sdk_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/intake"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/sdk"
)

// placeholder is the additional field name the SDK's templates use; it is a valid name, so the
// server's message for it is the template itself.
const placeholder = "{name}"

// serverMessages makes the intake's validation produce every violation a submission of the
// SDK can cause and returns its messages in lang by "field.code" (field "" for e-mail-or-phone).
func serverMessages(t *testing.T, lang string) map[string]string {
	t.Helper()
	long := func(n int) string { return strings.Repeat("x", n+1) }
	many := map[string]string{}
	for i := range intake.MaxFields + 1 {
		many[fmt.Sprintf("f%d", i)] = "v"
	}
	subs := []intake.Submission{
		{}, // names required, e-mail or phone required
		{FirstName: long(intake.MaxNameLen), LastName: long(intake.MaxNameLen), Email: long(intake.MaxEmailLen),
			Phone: long(intake.MaxPhoneLen), Notes: long(intake.MaxNotesLen),
			AdditionalFields: map[string]string{placeholder: long(intake.MaxFieldValueLen)}},
		{FirstName: "Jürgen", LastName: "Müller", Email: "juergen@", AdditionalFields: map[string]string{"": "x"}},
		{FirstName: "Jürgen", LastName: "Müller", Phone: "0170 1234567", AdditionalFields: many},
	}
	out := map[string]string{}
	for _, s := range subs {
		var inv *errs.Invalid
		if err := s.Validate(nil, lang); !errors.As(err, &inv) {
			t.Fatalf("Validate(%+v): %v, want *errs.Invalid", s, err)
		}
		for _, e := range inv.Errors {
			out[e.Field+"."+e.Code] = e.Detail
		}
	}
	return out
}

// sdkMessages reads the MESSAGES table of brokerdesk.js for lang.
func sdkMessages(t *testing.T, lang string) map[string]string {
	t.Helper()
	src := string(sdk.Script())
	block := regexp.MustCompile(`(?s)\n    ` + lang + `: \{\n(.*?)\n    \}`).FindStringSubmatch(src)
	if block == nil {
		t.Fatalf("brokerdesk.js has no MESSAGES.%s block", lang)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`'([^']*)': '([^']*)'`).FindAllStringSubmatch(block[1], -1) {
		out[m[1]] = m[2]
	}
	return out
}

// The SDK speaks the server's words: each message the intake answers for a field and code is
// the SDK's for the same field and code, in both languages, and the SDK has no message of its
// own. The invalid_type messages need a body of the wrong JSON type, which only the HTTP
// reader produces; test/browser compares those against the running server.
func TestSDK_MessagesAreTheServers(t *testing.T) {
	src := string(sdk.Script())
	for _, lang := range []string{"de", "en"} {
		server, js := serverMessages(t, lang), sdkMessages(t, lang)
		want := []string{"firstName.required", "firstName.too_long", "lastName.required", "lastName.too_long",
			"email.too_long", "email.invalid_email", "phone.too_long", ".email_or_phone_required", "notes.too_long",
			"additionalFields.too_many_fields", "additionalFields.invalid_field_name", "additionalFields.{name}.too_long"}
		for _, k := range want {
			if server[k] == "" {
				t.Errorf("%s: the server gave no message for %s (got %v)", lang, k, server)
			}
		}
		for k, msg := range server {
			if js[k] != msg {
				t.Errorf("%s %s: SDK says %q, server says %q", lang, k, js[k], msg)
			}
			if !strings.Contains(src, "'"+msg+"'") {
				t.Errorf("%s: brokerdesk.js lacks the server's message %q", lang, msg)
			}
		}
		for k := range js {
			if _, ok := server[k]; !ok && !strings.HasSuffix(k, ".invalid_type") {
				t.Errorf("%s: the SDK's message %s (%q) is not one the server gives", lang, k, js[k])
			}
		}
		if len(js) == 0 || !slices.Contains([]string{"de", "en"}, lang) {
			t.Fatalf("no messages read")
		}
	}
	if !strings.Contains(src, "'Validation failed'") {
		t.Errorf("brokerdesk.js lacks the legacy error text Validation failed")
	}
}
