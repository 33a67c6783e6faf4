//! Error types of the library: one enum per concern, combined in [`Error`].
//!
//! Each message names what the user wrote (the file, the field or the
//! option) and what is wrong with it, so that the CLI can print it as is.

use thiserror::Error as ThisError;

/// A drive specification could not be read or is not a possible drive.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum SpecError {
    /// The TOML could not be parsed or has fields of the wrong type.
    #[error("{origin}: {message}")]
    Parse {
        /// File or preset name.
        origin: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The file could not be read.
    #[error("{origin}: {message}")]
    Io {
        /// File name.
        origin: String,
        /// The system's message.
        message: String,
    },
    /// Neither a preset nor a file of that name exists.
    #[error("no preset or drive file named `{name}` (presets: {known})")]
    UnknownDrive {
        /// What the user asked for.
        name: String,
        /// Preset names.
        known: String,
    },
    /// A field holds a value no drive can have.
    #[error("{origin}: field `{field}`: {reason}")]
    Invalid {
        /// File or preset name.
        origin: String,
        /// Dotted path of the field, e.g. `geometry.channels`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A `--set path=value` override is malformed.
    #[error("--set {text}: {reason}")]
    Override {
        /// The override as written.
        text: String,
        /// What is wrong.
        reason: String,
    },
}

/// A workload (job options, job file or drive state) is malformed.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum JobError {
    /// An option has a value that cannot be used.
    #[error("{origin}: option `{option}`: {reason}")]
    Invalid {
        /// Job file (and line) or `command line`.
        origin: String,
        /// The option's name.
        option: String,
        /// What is wrong.
        reason: String,
    },
    /// Options that ssdtwin does not know (every one in the file, each
    /// with its line).
    #[error("{origin}: unknown option {option} (known: {known})")]
    UnknownOption {
        /// Job file and line of the first.
        origin: String,
        /// The options as written, quoted, the later ones with their lines.
        option: String,
        /// Options that are understood.
        known: String,
    },
    /// fio options the twin cannot give meaning to (every one in the
    /// file, each with its line and the reason).
    #[error("{origin}: option {option}")]
    Refused {
        /// Job file and line of the first.
        origin: String,
        /// The options as written, quoted, each with the reason, the later
        /// ones with their lines.
        option: String,
    },
    /// A job file line that is not `[section]`, `key=value` or a comment.
    #[error("{origin}: cannot parse `{line}`: {reason}")]
    Syntax {
        /// Job file and line.
        origin: String,
        /// The line as written.
        line: String,
        /// What is wrong.
        reason: String,
    },
    /// The job does not fit the drive (span beyond capacity, ...).
    #[error("job `{job}`: {reason}")]
    DoesNotFit {
        /// Job name.
        job: String,
        /// What is wrong.
        reason: String,
    },
}

/// A block trace could not be read, is malformed, or does not fit the
/// drive (see [`crate::run::trace`]). Every message names the file and,
/// for a request, its line.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read (or decompressed).
    #[error("{file}: {message}")]
    Io {
        /// Trace file.
        file: String,
        /// The system's (or decompressor's) message.
        message: String,
    },
    /// The format could not be told from the content.
    #[error("{file}: cannot tell the trace format: {reason} (give --trace-format: {known})")]
    UnknownFormat {
        /// Trace file.
        file: String,
        /// What was seen.
        reason: String,
        /// Format names.
        known: String,
    },
    /// A line of the trace is malformed.
    #[error("{file}:{line}: field `{field}`: {reason}")]
    Parse {
        /// Trace file.
        file: String,
        /// Line number (1-based).
        line: u64,
        /// The field's name in the format's description.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A request lies beyond the drive's capacity (the default; see
    /// `--lba-wrap` and `--lba-scale`).
    #[error(
        "{file}:{line}: request at byte {offset} + {len} bytes ends beyond the drive's {capacity} bytes \
         (use --lba-wrap or --lba-scale, or --trace-offset to move it)"
    )]
    OutOfRange {
        /// Trace file.
        file: String,
        /// Line number (1-based).
        line: u64,
        /// Byte offset after sector size and offset were applied (may be
        /// negative after a negative offset).
        offset: i128,
        /// Length, bytes.
        len: u64,
        /// The drive's user capacity, bytes.
        capacity: u64,
    },
    /// A replay option has a value that cannot be used.
    #[error("{option}: {reason}")]
    Option {
        /// The option as written, e.g. `--replay`.
        option: String,
        /// What is wrong.
        reason: String,
    },
    /// A synthetic trace generator's file is malformed.
    #[error("{file}: {reason}")]
    Generator {
        /// Generator name or file.
        file: String,
        /// What is wrong (with the phase and field).
        reason: String,
    },
}

/// A suite file could not be read, is malformed, or does not fit a drive.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum SuiteError {
    /// TOML syntax, a field of the wrong type or an unknown field.
    #[error("{origin}: {message}")]
    Parse {
        /// Suite name or file.
        origin: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The file could not be read.
    #[error("{origin}: {message}")]
    Io {
        /// File name.
        origin: String,
        /// The system's message.
        message: String,
    },
    /// Neither a built-in suite nor a file of that name exists.
    #[error("no suite or suite file named `{name}` (suites: {known})")]
    UnknownSuite {
        /// What the user asked for.
        name: String,
        /// Built-in names.
        known: String,
    },
    /// A field holds a value that cannot be used.
    #[error("{origin}: {at}: field `{field}`: {reason}")]
    Invalid {
        /// Suite name or file.
        origin: String,
        /// Which test, step or pass.
        at: String,
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// `--only` names a test the suite does not have.
    #[error("suite `{suite}` has no test `{name}` (tests: {known})")]
    UnknownTest {
        /// Suite name.
        suite: String,
        /// The name given.
        name: String,
        /// Test names.
        known: String,
    },
    /// A test does not fit the drive (span beyond the capacity, ...).
    #[error("suite `{suite}`, test `{test}` on drive `{drive}`: {reason}")]
    DoesNotFit {
        /// Suite name.
        suite: String,
        /// Test name.
        test: String,
        /// Drive name.
        drive: String,
        /// What is wrong.
        reason: String,
    },
}

/// Any error of the library.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum Error {
    /// Drive specification error.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Workload error.
    #[error(transparent)]
    Job(#[from] JobError),
    /// Suite file error.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// Trace error.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A fio log file (`write_bw_log`, ...) could not be written.
    #[error("writing log {path}: {source}")]
    Log {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
