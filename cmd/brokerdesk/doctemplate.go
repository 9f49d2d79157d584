package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/brokerdesk/brokerdesk/app/doctemplates"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// docTemplateUsage is the document template and standard document part of the usage text.
const docTemplateUsage = `doc-template list --company ID
  doc-template set --company ID --name N --category C --file BODY.txt   add a template, or replace the one of that name
  doc-template seed --company ID       add the German default templates the company lacks (by name)
  standard-document list --company ID
  standard-document add --company ID --name N --file X.pdf [--filename F] [--fields JSON]
  standard-document remove --company ID ID-OR-NAME
  standard-document seed --company ID  add the default standard documents the company lacks, rendered with its data`

// docTemplate handles `brokerdesk doc-template list|set|seed`: the company's document templates
// (GET /document-templates). The spec lists only their read; the operator writes them. A body
// is checked before it is stored: markup, placeholders of the known namespaces (contact.,
// contract., user., company., date., advice., advisor.) or plain names (variables of POST
// /documents/generate), signature fields of contact or broker.
func (e env) docTemplate(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("doc-template: want list, set or seed\n  %s", docTemplateUsage)
	}
	fs := e.flags("doc-template " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	var name, category, file *string
	switch args[0] {
	case "set":
		name = fs.String("name", "", "the template's name (unique in the company; the default file name of generated PDFs)")
		category = fs.String("category", "", "letter, broker_agreement, power_of_attorney, privacy, advice_protocol, cover_note or other")
		file = fs.String("file", "", "file holding the body in the template markup (UTF-8)")
	case "list", "seed":
	default:
		return fmt.Errorf("doc-template: unknown subcommand %q\n  %s", args[0], docTemplateUsage)
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
	line := func(t doctemplates.TemplateView) string {
		return fmt.Sprintf("%s  %s  (%s)  placeholders: %v  signatures: %v", t.ID, t.Name, t.Category, t.Placeholders, t.SignatureRoles)
	}
	switch args[0] {
	case "list":
		ts, err := svc.ListDocTemplates(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, ts, func(w io.Writer) {
			for _, t := range ts {
				fmt.Fprintln(w, line(t))
			}
		})
	case "seed":
		added, err := svc.SeedDocTemplates(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, added, func(w io.Writer) {
			if len(added) == 0 {
				fmt.Fprintln(w, "the company has every default document template")
			}
			for _, t := range added {
				fmt.Fprintln(w, "added", line(t))
			}
		})
	}
	if *file == "" {
		return fmt.Errorf("doc-template set: --file is required")
	}
	body, err := os.ReadFile(*file)
	if err != nil {
		return fmt.Errorf("doc-template set: %w", err)
	}
	t, created, err := svc.SetDocTemplate(ctx, co, doctemplates.NewTemplate{Name: *name, Category: *category, Body: string(body)})
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, t, func(w io.Writer) {
		verb := "replaced"
		if created {
			verb = "added"
		}
		fmt.Fprintln(w, verb, line(t))
	})
}

// standardDocument handles `brokerdesk standard-document list|add|remove|seed`: the company's
// standard documents (GET /standard-documents), PDFs sent for signature as they are. An added
// PDF is checked as a signature source is (pdf.Inspect: no encryption, no JavaScript, within
// limits); its signature fields come from --fields as JSON, e.g.
// '[{"role":"contact","page":1,"x":0.1,"y":0.8,"width":0.35,"height":0.07}]'.
func (e env) standardDocument(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("standard-document: want list, add, remove or seed\n  %s", docTemplateUsage)
	}
	fs := e.flags("standard-document " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	var name, file, filename, fields *string
	switch args[0] {
	case "add":
		name = fs.String("name", "", "the document's name (unique in the company)")
		file = fs.String("file", "", "the PDF")
		filename = fs.String("filename", "", "the file name signers see (default: the file's)")
		fields = fs.String("fields", "", "signature fields as JSON: [{role, page, x, y, width, height}], relative 0-1 from the top left")
	case "list", "remove", "seed":
	default:
		return fmt.Errorf("standard-document: unknown subcommand %q\n  %s", args[0], docTemplateUsage)
	}
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	co, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	if args[0] == "remove" && len(pos) != 1 {
		return fmt.Errorf("standard-document remove: name the document by id or name")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	line := func(d doctemplates.StandardDocumentView) string {
		return fmt.Sprintf("%s  %s  %s  %d bytes  signature fields: %v", d.ID, d.Name, d.Filename, d.SizeBytes, d.HasSignatureFields)
	}
	switch args[0] {
	case "list":
		ds, err := svc.ListStandardDocuments(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, ds, func(w io.Writer) {
			for _, d := range ds {
				fmt.Fprintln(w, line(d))
			}
		})
	case "seed":
		added, err := svc.SeedStandardDocuments(ctx, co)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, added, func(w io.Writer) {
			if len(added) == 0 {
				fmt.Fprintln(w, "the company has every default standard document")
			}
			for _, d := range added {
				fmt.Fprintln(w, "added", line(d))
			}
		})
	case "remove":
		d, err := svc.RemoveStandardDocument(ctx, co, pos[0])
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, d, func(w io.Writer) { fmt.Fprintln(w, "removed", line(d)) })
	}
	if *file == "" {
		return fmt.Errorf("standard-document add: --file is required")
	}
	content, err := os.ReadFile(*file)
	if err != nil {
		return fmt.Errorf("standard-document add: %w", err)
	}
	in := doctemplates.NewStandardDocument{Name: *name, Filename: *filename, Content: content}
	if in.Filename == "" {
		in.Filename = filepath.Base(*file)
	}
	if *fields != "" {
		var fs []schematype.SignatureField
		if err := json.Unmarshal([]byte(*fields), &fs); err != nil {
			return fmt.Errorf("standard-document add: --fields: %w", err)
		}
		in.Fields = fs
	}
	d, err := svc.AddStandardDocument(ctx, co, in)
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, d, func(w io.Writer) { fmt.Fprintln(w, "added", line(d)) })
}
