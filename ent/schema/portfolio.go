package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// PortfolioTransfer is an import of a portfolio file (GDV, BiPRO, CSV): the stored file, its
// validation (summary, issues) and the progress of its commit. The file lives in blob storage
// under blob_key, which the server chooses (never the caller).
type PortfolioTransfer struct{ ent.Schema }

// Mixin of PortfolioTransfer.
func (PortfolioTransfer) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}}
}

// Fields of PortfolioTransfer.
func (PortfolioTransfer) Fields() []ent.Field {
	return []ent.Field{
		// status: pending (stored, validation queued), validating, validated, committing,
		// committed, failed (the file could not be read at all).
		field.Enum("status").Values("pending", "validating", "validated", "committing", "committed", "failed").Default("pending"),
		field.Enum("format").Values("gdv_vu_vermittler", "bipro_430_4", "csv").Immutable(),
		// source is the key of the external references the transfer writes.
		field.String("source").NotEmpty().MaxRuneLen(100).Immutable(),
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("mapping_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// mapping is the CSV mapping as it was when the transfer was created (columns,
		// defaults, decimalPoint): validation and commit read the same one whatever happens
		// to the mapping resource meanwhile.
		field.JSON("mapping", map[string]any{}).Optional().Immutable(),
		field.Bool("auto_commit").Default(false).Immutable(),
		field.Enum("write_mode").Values("overwrite", "fill_empty_only").Default("overwrite").Immutable(),
		field.String("encoding").Default("").MaxLen(20).Immutable(),
		field.String("filename").Default("").MaxRuneLen(255).Immutable(),
		field.Int64("size").Min(0).Immutable(),
		field.String("sha256").MaxLen(64).Immutable(),
		field.String("blob_key").NotEmpty().MaxLen(200).Immutable().Sensitive(),
		field.JSON("summary", map[string]any{}).Optional(),
		field.JSON("issues", []map[string]any{}).Optional(),
		// committed is how many contracts of the file (in file order) the commit has written;
		// a resumed commit starts after them.
		field.Int64("committed").Default(0),
		field.JSON("progress", map[string]int64{}).Optional(),
		field.String("error").Default("").MaxRuneLen(2000),
		field.Time("validated_at").Optional().Nillable(),
		field.Time("committed_at").Optional().Nillable(),
	}
}

// Indexes of PortfolioTransfer.
func (PortfolioTransfer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "created_at", "id"), index.Fields("company_id", "status")}
}

// PortfolioMapping is a company's CSV field mapping for portfolio transfers with format csv:
// which column header fills which field (package portfoliocsv's targets), defaults for every
// row, and the amount format.
type PortfolioMapping struct{ ent.Schema }

// Mixin of PortfolioMapping.
func (PortfolioMapping) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, TimeMixin{}, VersionMixin{}}
}

// Fields of PortfolioMapping.
func (PortfolioMapping) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxRuneLen(200),
		field.JSON("columns", map[string]string{}),
		field.JSON("defaults", map[string]string{}).Optional(),
		// decimal_point: amounts like 1,234.56 (default: German 1.234,56).
		field.Bool("decimal_point").Default(false),
	}
}

// Indexes of PortfolioMapping.
func (PortfolioMapping) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "created_at", "id")}
}
