package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/brokerdesk/brokerdesk/app/emails"
)

// templateUsage is the template part of the usage text.
const templateUsage = `template create --company ID --name N --subject S --text-file F [--html-file F] [--category C] [--marketing]
  template seed --company ID           add the German default templates the company lacks (by name)`

// template handles `brokerdesk template create|seed`: the company's e-mail templates (GET
// /email-templates). The spec leaves their writing open; the operator writes them, the API
// only reads and sends them. Bodies come from files (multi-line text, HTML).
func (e env) template(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("template: want create or seed\n  %s", templateUsage)
	}
	fs := e.flags("template " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	var name, subject, textFile, htmlFile, category *string
	var marketing *bool
	switch args[0] {
	case "create":
		name = fs.String("name", "", "the template's name (unique in the company)")
		subject = fs.String("subject", "", "the subject, with {{placeholders}}")
		textFile = fs.String("text-file", "", "file holding the text body (UTF-8)")
		htmlFile = fs.String("html-file", "", "file holding the HTML body (optional)")
		category = fs.String("category", "", "a category to group templates by (optional)")
		marketing = fs.Bool("marketing", false, "marketing mail: opt-outs apply, List-Unsubscribe is added")
	case "seed":
	default:
		return fmt.Errorf("template: unknown subcommand %q\n  %s", args[0], templateUsage)
	}
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	co, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	line := func(t emails.TemplateView) string {
		return fmt.Sprintf("%s  %s  placeholders: %v", t.ID, t.Name, t.Placeholders)
	}

	if args[0] == "seed" {
		added, err := svc.SeedTemplates(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, added, func(w io.Writer) {
			if len(added) == 0 {
				fmt.Fprintln(w, "the company has every default template")
			}
			for _, t := range added {
				fmt.Fprintln(w, "added", line(t))
			}
		})
	}
	if *textFile == "" {
		return fmt.Errorf("template create: --text-file is required")
	}
	text, err := os.ReadFile(*textFile)
	if err != nil {
		return fmt.Errorf("template create: %w", err)
	}
	in := emails.NewTemplate{Name: *name, Subject: *subject, Text: string(text), Marketing: *marketing}
	if *htmlFile != "" {
		html, err := os.ReadFile(*htmlFile)
		if err != nil {
			return fmt.Errorf("template create: %w", err)
		}
		h := string(html)
		in.HTML = &h
	}
	if *category != "" {
		in.Category = category
	}
	t, err := svc.CreateTemplate(ctx, co, in)
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, t, func(w io.Writer) { fmt.Fprintln(w, line(t)) })
}
