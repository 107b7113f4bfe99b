//! Records as Arrow record batches: oxbow's columns (`qname flag rname pos mapq cigar rnext
//! pnext tlen seq qual end`, with its types and missing values) and, on request, one column a
//! tag. Laid out on worker threads ([`workers`]) beside the query's, handed to Python through
//! the Arrow C stream interface.

mod columns;
mod text;
pub mod workers;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field as ArrowField, Schema, SchemaRef};
use bam::{Header, RecordRef};

use crate::Error;
use columns::{Column, TagColumn};

pub use columns::TagKind;

/// A standard column, by oxbow's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The read name (null for `*`).
    Qname,
    /// FLAG.
    Flag,
    /// The reference name (a dictionary of the header's names; null when unplaced).
    Rname,
    /// The position: 1-based (oxbow's default `coords="11"`) or 0-based (`"01"`); null when
    /// unplaced.
    Pos,
    /// MAPQ (null for 255, "not available").
    Mapq,
    /// The CIGAR string (null when there is none).
    Cigar,
    /// The mate's reference name.
    Rnext,
    /// The mate's position, as `pos`.
    Pnext,
    /// TLEN.
    Tlen,
    /// The bases.
    Seq,
    /// The qualities as Phred+33 text (null when missing).
    Qual,
    /// The last reference base covered, 1-based (the 0-based end, exclusive: the same number);
    /// for a record covering no reference base, its start (noodles' `alignment_end`).
    End,
}

/// Every standard column, in oxbow's order.
pub const FIELDS: [(&str, Field); 12] = [
    ("qname", Field::Qname),
    ("flag", Field::Flag),
    ("rname", Field::Rname),
    ("pos", Field::Pos),
    ("mapq", Field::Mapq),
    ("cigar", Field::Cigar),
    ("rnext", Field::Rnext),
    ("pnext", Field::Pnext),
    ("tlen", Field::Tlen),
    ("seq", Field::Seq),
    ("qual", Field::Qual),
    ("end", Field::End),
];

impl Field {
    fn data_type(self) -> DataType {
        match self {
            Field::Qname | Field::Cigar | Field::Seq | Field::Qual => DataType::Utf8,
            Field::Flag => DataType::UInt16,
            Field::Rname | Field::Rnext => {
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
            }
            Field::Pos | Field::Pnext | Field::Tlen | Field::End => DataType::Int32,
            Field::Mapq => DataType::UInt8,
        }
    }
}

/// The columns a table has: which, in what order, and how positions count.
#[derive(Debug)]
pub struct Layout {
    fields: Vec<Field>,
    tags: Vec<(String, TagKind)>,
    /// 0 for 0-based positions, 1 for 1-based.
    base: i64,
    /// The reference names, the dictionary of `rname` and `rnext`.
    names: ArrayRef,
    schema: SchemaRef,
}

impl Layout {
    /// The layout of `columns` (oxbow's names; `None`: all of them), then one column a tag of
    /// `tags` (each a two-letter tag and, optionally, its type: `A Z H c C s S i I f` or `B`
    /// with a subtype, as oxbow's `tag_defs`; without one, the value as SAM text), with
    /// positions 1-based (`coords = "11"`, oxbow's default) or 0-based (`"01"`).
    pub fn new(
        columns: Option<&[String]>,
        tags: &[(String, Option<String>)],
        coords: &str,
        header: &Header,
    ) -> Result<Layout, Error> {
        let fields = match columns {
            None => FIELDS.iter().map(|(_, f)| *f).collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    FIELDS
                        .iter()
                        .find(|(name, _)| name == n)
                        .map(|(_, f)| *f)
                        .ok_or_else(|| {
                            let known: Vec<&str> = FIELDS.iter().map(|(n, _)| *n).collect();
                            Error::Argument(format!(
                                "unknown column '{n}' (columns: {})",
                                known.join(", ")
                            ))
                        })
                })
                .collect::<Result<Vec<_>, Error>>()?,
        };
        let base = match coords {
            "11" => 1,
            "01" => 0,
            other => {
                return Err(Error::Argument(format!(
                    "coords must be \"11\" (1-based) or \"01\" (0-based), not \"{other}\""
                )))
            }
        };
        let tags = tags
            .iter()
            .map(|(tag, ty)| Ok((tag.clone(), TagKind::parse(tag, ty.as_deref())?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let mut schema: Vec<ArrowField> = fields
            .iter()
            .map(|f| {
                let name = FIELDS.iter().find(|(_, g)| g == f).map_or("", |(n, _)| n);
                ArrowField::new(name, f.data_type(), true)
            })
            .collect();
        for (tag, kind) in &tags {
            if schema.iter().any(|f| f.name() == tag) {
                return Err(Error::Argument(format!("column '{tag}' asked for twice")));
            }
            schema.push(ArrowField::new(tag, kind.data_type(), true));
        }
        let names: Vec<String> = header
            .refs()
            .iter()
            .map(|r| String::from_utf8_lossy(&r.name).into_owned())
            .collect();
        Ok(Layout {
            fields,
            tags,
            base,
            names: Arc::new(StringArray::from(names)),
            schema: Arc::new(Schema::new(schema)),
        })
    }

    /// Whether the layout has tag columns (which read the records' aux data).
    pub fn has_tags(&self) -> bool {
        !self.tags.is_empty()
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// An empty batch to fill.
    pub fn batch(self: &Arc<Layout>) -> Batch {
        let mut columns: Vec<Column> = self.fields.iter().map(|f| Column::new(*f)).collect();
        columns.extend(
            self.tags
                .iter()
                .map(|(tag, kind)| Column::Tag(TagColumn::new(tag, *kind))),
        );
        Batch {
            layout: Arc::clone(self),
            columns,
            rows: 0,
            scratch: Vec::new(),
        }
    }
}

/// Rows being gathered into one record batch.
pub struct Batch {
    layout: Arc<Layout>,
    columns: Vec<Column>,
    rows: usize,
    scratch: Vec<u8>,
}

impl Batch {
    /// Adds a record's row. A tag whose field cannot be read (corrupt aux data) is an error
    /// naming the record; a tag of another type than its column's is null.
    pub fn push(&mut self, record: &RecordRef<'_>) -> Result<(), Error> {
        let base = self.layout.base;
        for column in &mut self.columns {
            column.push(record, base, &mut self.scratch)?;
        }
        self.rows += 1;
        Ok(())
    }

    /// The rows so far.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the batch should be handed over: `rows` rows, or string columns near what
    /// 32-bit offsets can address (long reads).
    pub fn is_full(&self, rows: usize) -> bool {
        self.rows >= rows || self.columns.iter().any(|c| c.bytes() > 1 << 30)
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The rows as a record batch; the builders start again empty.
    pub fn finish(&mut self) -> Result<RecordBatch, Error> {
        let names = &self.layout.names;
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|c| c.finish(names))
            .collect::<Result<_, _>>()?;
        self.rows = 0;
        RecordBatch::try_new(self.layout.schema(), arrays)
            .map_err(|e| Error::Read(format!("cannot make an Arrow batch: {e}")))
    }
}
