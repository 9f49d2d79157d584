package mail

import (
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
)

// The policies are built once: bluemonday policies are safe for concurrent use once built.
var (
	ugcPolicy   = newUGCPolicy()
	stripPolicy = bluemonday.StrictPolicy()
)

// newUGCPolicy is bluemonday's user-generated-content policy (links, images, tables, basic
// formatting; no script, style, event handlers, forms, iframes or javascript: URLs) plus cid:
// image sources for inline images and links that open without referrer.
func newUGCPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowURLSchemes("mailto", "http", "https", "cid", "tel")
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
}

// Sanitize returns html safe to serve in the broker's browser (bluemonday UGC policy).
func Sanitize(html string) string {
	return ugcPolicy.Sanitize(html)
}

var (
	blockEndRe  = regexp.MustCompile(`(?i)<\s*(br\s*/?|/p|/div|/tr|/h[1-6]|/li|/blockquote|/table|hr\s*/?)\s*>`)
	liStartRe   = regexp.MustCompile(`(?i)<\s*li[^>]*>`)
	spacesRe    = regexp.MustCompile(`[ \t\x{00A0}]+`)
	blankRunsRe = regexp.MustCompile(`\n{3,}`)
)

// HTMLToText is the plain text of an HTML body: tags stripped (script and style with their
// content), line breaks kept at block ends, entities decoded, whitespace collapsed.
func HTMLToText(s string) string {
	s = blockEndRe.ReplaceAllString(s, "$0\n")
	s = liStartRe.ReplaceAllString(s, "$0- ")
	s = html.UnescapeString(stripPolicy.Sanitize(s))
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(spacesRe.ReplaceAllString(l, " "))
	}
	s = strings.Join(lines, "\n")
	return strings.TrimSpace(blankRunsRe.ReplaceAllString(s, "\n\n"))
}
