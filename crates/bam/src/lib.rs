//! bam
