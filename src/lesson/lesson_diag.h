/* The lesson loader's diagnostics: every kind of problem with its message format in one table,
 * every hint (how to fix one) in another, and the functions that record them. Messages and hints
 * never contain raw untrusted text: callers pass token names and keys through lesson_escape. */
#ifndef ATTNSTEP_LESSON_DIAG_H
#define ATTNSTEP_LESSON_DIAG_H

#include "lesson.h"

/* X(ID, printf format of the message) */
#define LESSON_ERROR_TABLE(X) \
    X(CANNOT_READ,       "cannot read: %s") \
    X(FILE_TOO_LARGE,    "the file is larger than the limit of 4 MiB (4194304 bytes)") \
    X(FILE_EMPTY,        "the file is empty; a lesson needs at least title, tokens and " \
                         "embeddings") \
    X(NUL_BYTE,          "NUL byte: this is a binary file, not a YAML lesson") \
    X(BAD_UTF8,          "invalid UTF-8 (byte 0x%02x): a lesson must be UTF-8 text") \
    X(CONTROL_CHAR,      "control character %s is not allowed in a lesson") \
    X(YAML_SYNTAX,       "YAML syntax error: %s") \
    X(YAML_TAB,          "YAML syntax error: a tab here; YAML indents with spaces only") \
    X(MISSING_SPACE,     "missing space after ':': YAML reads '%s' as text, not as a key " \
                         "and its value") \
    X(BRACE_TEXT,        "text that starts with '{' is a mapping to YAML ({key: value}), so " \
                         "this text is not read as written") \
    X(COLON_IN_TEXT,     "quote the text: a ': ' inside unquoted text starts a mapping") \
    X(KEY_TOO_DEEP,      "'%s' is indented deeper than the key above it, so YAML reads it " \
                         "as more of that key's text") \
    X(NOT_KEY_VALUE,     "this line is neither 'key: value' nor more of the text above it") \
    X(UNCLOSED_QUOTE,    "this quote (%s) is never closed: the quoted text runs to the end " \
                         "of the file") \
    X(UNCLOSED_BRACKET,  "this '%s' is never closed") \
    X(AFTER_CLOSING,     "more text after the closing %s") \
    X(WRONG_INDENT,      "wrong indentation: this line starts in column %d, but the %s it " \
                         "belongs to start in column %d (line %d)") \
    X(TOO_DEEP,          "nesting deeper than %d levels; the limit is %d") \
    X(TOO_MANY_NODES,    "more than %d YAML values; the limit is %d") \
    X(ANCHOR,            "YAML anchors are not allowed (&%s)") \
    X(ALIAS,             "YAML aliases are not allowed (*%s)") \
    X(SECOND_DOCUMENT,   "a second YAML document; a lesson file holds exactly one") \
    X(STRING_TOO_LONG,   "text of %zu bytes; the limit is 64 KiB (65536 bytes)") \
    X(NUL_IN_TEXT,       "text containing a NUL character (\\0)") \
    X(NOT_A_LESSON,      "a lesson is a mapping of keys (title:, tokens:, ...), not %s") \
    X(KEY_NOT_TEXT,      "a key must be text, not %s") \
    X(DUPLICATE_KEY,     "duplicate key '%s' (first given at line %d)") \
    X(ITEM_WITHOUT_DASH, "duplicate key '%s' (first given at line %d), where another item " \
                         "would start; did you forget '- '?") \
    X(MISSING_DASH,      "this line lines up with the items ('-') of the list on line %d but " \
                         "has no '-'; did you forget '- '?") \
    X(MISSING_COLON,     "no ':' after '%s', so YAML reads '%s' as text and the lines below " \
                         "as more of it") \
    X(UNKNOWN_KEY,       "unknown key '%s'") \
    X(MISSING_KEY,       "missing key '%s'") \
    X(WRONG_TYPE,        "%s must be %s, not %s") \
    X(BAD_VALUE,         "%s must be %s, not '%s'") \
    X(NOT_A_NUMBER,      "%s: '%s' is not a number") \
    X(NOT_FINITE,        "%s: '%s' is not a finite number") \
    X(OUT_OF_RANGE,      "%s: '%s' is too large for a double (the largest is about 1.8e308)") \
    X(ROUNDS_TO_ZERO,    "%s: '%s' is too small for a double: it rounds to zero (the " \
                         "smallest is about 4.9e-324); write 0 if zero is meant") \
    X(BAD_INTEGER,       "%s must be a whole number from %llu to %llu, not '%s'") \
    X(OVER_LIMIT,        "%s is %llu; the limit is %llu") \
    X(EMPTY_LIST,        "%s must not be empty") \
    X(EMPTY_TOKEN,       "empty token in %s") \
    X(NULL_TOKEN,        "a token written '%s' in %s is YAML's empty value (null), not the " \
                         "word") \
    X(TOKEN_TOO_LONG,    "token of %zu bytes; the limit is 256 bytes") \
    X(WRONG_SIZE,        "%s: expected %d %s, found %d") \
    X(DECIMAL_COMMAS,    "%s: probable decimal commas: the list mixes ', ' and ',' between " \
                         "numbers") \
    X(HEADS_DIVIDE,      "heads (%d) must divide d_model (%d)") \
    X(NEEDS_D_MODEL,     "random embeddings need 'd_model: N' beside them") \
    X(NO_EMBEDDING,      "token '%s' has no embedding") \
    X(NO_TARGET_ROW,     "token '%s' has no row in the loss's target") \
    X(TARGET_NOT_TOKEN,  "the loss's target has a row for '%s', which is not one of the tokens") \
    X(LOSS_DECODES,      "a loss needs the whole pass at once, but this lesson decodes one " \
                         "token at a time (decode: true)") \
    X(TRAIN_EMBEDDINGS,  "train: params: embeddings are the lesson's data, never trained; " \
                         "name weights and biases (W_Q, W_K, W_V, W_O, b_Q, …)") \
    X(TRAIN_ABSENT,      "train: params names '%s', which this lesson does not have (give " \
                         "'%s:' to train it)") \
    X(TRAIN_TWICE,       "train: params names '%s' twice") \
    X(MASK_ROW_HIDDEN,   "the mask row of '%s' hides every key; each token must see at least one") \
    X(CAUSAL_CROSS,      "a causal mask needs self-attention, but this lesson has a source") \
    X(SELF_ONLY,         "%s needs self-attention, but this lesson has a source") \
    X(RMS_BIAS,          "an RMS norm has no bias (as torch.nn.RMSNorm): remove 'bias:' or " \
                         "write 'kind: layer'") \
    X(ROPE_ODD_D_K,      "positional: rope turns pairs of dimensions, so d_k (d_model / heads) " \
                         "must be even; here it is %d") \
    X(KV_HEADS_DIVIDE,   "kv_heads (%d) must divide heads (%d)") \
    X(IDENTITY_NOT_SQUARE, "%s cannot be identity: with kv_heads %d it has %d %s " \
                         "(kv_heads × d_k), not d_model = %d") \
    X(STAGE_ABSENT,      "%s") \
    X(TRACE_TOO_LARGE,   "the lesson and its trace would need %s") \
    X(UNKNOWN_STAGE,     "unknown stage '%s'") \
    X(NO_SUCH_HEAD,      "head %d does not exist; this lesson has %d") \
    X(HEAD_NOT_PER_HEAD, "stage '%s' is one matrix for all heads, so it takes no 'head'; " \
                         "the stages with one matrix per head are: %s") \
    X(BAD_POSITION,      "position '%s' is not one of the tokens (a token, or an index from 0 " \
                         "to %d)") \
    X(FOCUS_NOT_SHOWN,   "the focus is not shown at this position: at position '%s', stage '%s' " \
                         "shows %s%s") \
    X(BAD_FOCUS,         "focus %s '%s' is not one of the %ss of stage '%s'") \
    X(REPEATED_TOKEN,    "%s names a token written more than once: %s") \
    X(NOT_A_CHOICE,      "answer '%s' is not one of the choices") \
    X(NEEDS,             "'%s' needs %s") \
    X(NO_MEMORY,         "not enough memory to load this lesson") \
    X(BAD_CLAIM,         "claim '%s' cannot be read: %s") \
    X(FALSE_CLAIM,       "claim '%s' is false: %s") \
    X(WRONG_ANSWER,      "answer %s is not %s (%s \u00b1 %s)") \
    X(WRONG_CHOICE,      "answer '%s' is not the column of the focus %s; a choice that names " \
                         "a column is the right one only at the focus") \
    X(AUTO_NO_FOCUS,     "'answer: auto' needs a focus: the cell to take the answer from") \
    X(AUTO_NO_CHOICE,    "'answer: auto': no choice is '%s', the focus cell's column") \
    X(AUTO_NOT_LARGEST,  "'answer: auto' takes '%s', the column of the focus %s, but the " \
                         "largest value of that row is at '%s'; if the question asks which is " \
                         "largest, put the focus there") \
    X(KEY_NOT_LARGEST,   "answer '%s' is the column of the focus %s, but the question asks " \
                         "for the largest and that row's largest value is at '%s'; put the " \
                         "focus and the answer there") \
    X(AUTO_NOT_SMALLEST, "'answer: auto' takes '%s', the column of the focus %s, but the " \
                         "question asks for the smallest and that row's smallest visible value " \
                         "is at '%s'; put the focus there") \
    X(KEY_NOT_SMALLEST,  "answer '%s' is the column of the focus %s, but the question asks " \
                         "for the smallest and that row's smallest visible value is at '%s'; " \
                         "put the focus and the answer there") \
    X(UNCHECKED_ANSWER,  "answer %s cannot be checked: the step has no focus (or write " \
                         "'answer: auto' with a focus)") \
    X(BAD_PLACEHOLDER,   "%s") \
    X(QUESTION_LEAK,     "the answer to this question is already on screen: step %d (line %d) " \
                         "shows %s%s; ask it at or before the first step that shows it") \
    X(QUESTION_TOLD,     "the answer to this question is already on screen: %s (line %d) " \
                         "writes %s; tell it after the question, in its step's say") \
    X(DATA_FILE,         "%s '%s': %s") \
    X(FILE_SHAPE,        "%s '%s' has shape %s; %s needs shape %s") \
    X(DRAW_ORDER,        "draw_order: %s") \
    X(CSV_HEADER,        "%s '%s': line 1 (%s) is read as a header, not as a row of " \
                         "numbers, because every field in it is text") \
    X(TOO_MANY_ERRORS,   "too many problems; only the first %d are shown") \
    X(QUESTION_SAID,     "the answer to this question is already given: %s (line %d) says " \
                         "'%s'; tell it after the question, in its step's say") \
    X(COMMENT_CUTS_TEXT, "' #' starts a YAML comment in unquoted text, so the text ends " \
                         "before it and '%s' is left out")

typedef enum {
#define LESSON_ERROR_ENUM(id, format) LESSON_ERROR_##id,
    LESSON_ERROR_TABLE(LESSON_ERROR_ENUM)
#undef LESSON_ERROR_ENUM
    LESSON_ERROR_COUNT
} lesson_error;

/* X(ID, printf format of the hint): how to fix a problem, printed as "hint: ..." after it. */
#define LESSON_HINT_TABLE(X) \
    X(USE_HEADS,         "use %s") \
    X(KEYS_HERE,         "the keys here are: %s") \
    X(STAGES_ARE,        "the stages are: %s") \
    X(SPACE_AFTER_COLON, "put a space after ':', as in '%s'") \
    X(QUOTE_LINE,        "write it as \"%s\"") \
    X(WRITE_AS,          "write it as '%s'") \
    X(QUOTE_WORD,        "quote it: \"%s\"") \
    X(QUOTE_TEXT,        "put the whole text in double quotes") \
    X(QUOTE_BRACES,      "braces start a YAML mapping ({key: value}); to write text that " \
                         "starts with '{', put the whole text in double quotes") \
    X(QUOTE_FROM,        "put the whole text, from line %d, in double quotes") \
    X(HIDDEN_BREAK,      "line %d ends in %s, which YAML reads as a line break though an " \
                         "editor may not show one: delete it (in double quotes, write %s)") \
    X(LINE_UP_KEY,       "line it up with the key on line %d, or quote the text if it is not " \
                         "a key") \
    X(CONTINUE_TEXT,     "to continue a text, indent the line deeper than its key; otherwise " \
                         "write 'key: value'") \
    X(CLOSE_QUOTE,       "end the text with a closing %s") \
    X(CLOSE_BRACKET,     "end the %s with '%s'") \
    X(INSIDE_CLOSING,    "put all of the text inside the %s") \
    X(LINE_UP,           "start it in column %d, or deeper to put it inside the value above") \
    X(LINE_UP_ITEM,      "to continue the item of line %d, start it in column %d, under its " \
                         "first key") \
    X(MOST_HAVE,         "most %s here have %d %s") \
    X(DECIMAL_POINT,     "write decimals with a point: %s") \
    X(KV_MATRIX,         "write %s as %d %s of %d %s, or {random: normal, seed: N}") \
    X(EVEN_D_K,          "use d_model and heads whose quotient is even, e.g. heads: %d") \
    X(SEPARATE_NUMBERS,  "write decimals with a point, and ', ' between numbers") \
    X(BIAS_LENGTH,       "%s is added to every row of %s, one number per column: %s") \
    X(GAIN_LENGTH,       "%s multiplies every row of %s, one number per column: %s") \
    X(INDEX_RANGE,       "an index of a %s of stage '%s' is from 0 to %d") \
    X(CSV_ROW,           "if line 1 is meant as a row of numbers, correct it; a header is " \
                         "not read as numbers") \
    X(CSV_HEADER_READ,   "line 1 (%s) was read as a header, every field in it being text; " \
                         "if it is a row of numbers, correct it") \
    X(ALLOW_PATHS,       "copy the file into the lesson's folder, or run attnstep with " \
                         "--allow-paths if you trust this lesson")

typedef enum {
#define LESSON_HINT_ENUM(id, format) LESSON_HINT_##id,
    LESSON_HINT_TABLE(LESSON_HINT_ENUM)
#undef LESSON_HINT_ENUM
    LESSON_HINT_COUNT
} lesson_hint_id;

/* At most this many diagnostics are kept; one more line then says that there were more. */
#define LESSON_MAX_DIAGNOSTICS 100

/* Records an error at line:col (from 1; 0:0 for the file as a whole), keeping the list in
 * order of position. The arguments follow the error's format in the table. Returns the
 * diagnostic recorded, valid until the next report (to give it a hint), or NULL when it was
 * dropped (too many, or out of memory). */
lesson_diagnostic *lesson_report(lesson_diagnostics *diagnostics, int line, int col,
                                 lesson_error error, ...);

/* The same for a warning: printed as "warning:", and not an error (lesson_error_count); the
 * lesson stays usable. */
lesson_diagnostic *lesson_report_warning(lesson_diagnostics *diagnostics, int line, int col,
                                         lesson_error error, ...);

/* The same for a note: what the loader took a guess at (a CSV file's first line read as its
 * header), printed as "note:"; never a failure, and kept in the lesson (lesson.notes). */
lesson_diagnostic *lesson_report_note(lesson_diagnostics *diagnostics, int line, int col,
                                      lesson_error error, ...);

/* Adds a copy of each diagnostic of from (NULL is allowed) to `to`, in order of position:
 * lesson_check passes a lesson's notes on with its warnings. */
void lesson_diagnostics_add_copies(lesson_diagnostics *to, const lesson_diagnostics *from);

/* Adds "; did you mean 'X'?" to the message of item (from lesson_report; NULL is ignored)
 * when X, one of words[0 … count-1], is near word. Returns whether it did. */
bool lesson_suggest(lesson_diagnostic *item, const char *word, const char *const *words,
                    int count);

/* Gives item (from lesson_report; NULL is allowed and ignored) the hint of the table, its
 * arguments following the hint's format. */
void lesson_hint(lesson_diagnostic *item, lesson_hint_id hint, ...);

/* Root causes first: item (NULL is ignored) follows from the absence of `key` in the mapping
 * at line:col ("missing key 'tokens'", an answer read as a number without its choices). */
void lesson_follows(lesson_diagnostic *item, int line, int col, const char *key);

/* Every problem reported from now until lesson_follow_from(d, 0, 0, NULL) follows from the
 * absence of `key` in the mapping at line:col (an answer read while its choices are missing). */
void lesson_follow_from(lesson_diagnostics *diagnostics, int line, int col, const char *key);

/* root (NULL is ignored) explains the absence of `key` in the mapping at line:col: it is that
 * key misspelt. lesson_report_finish drops every problem that follows from it, so the author
 * reads the cause rather than its cascade. */
void lesson_explains(lesson_diagnostic *root, int line, int col, const char *key);

/* The diagnostics that are errors (the dropped ones counted as errors). */
int lesson_error_count(const lesson_diagnostics *diagnostics);

/* Drops the problems that another one explains (lesson_explains), and the notes when there is
 * an error, then adds the closing "too many problems" line if some were dropped. */
void lesson_report_finish(lesson_diagnostics *diagnostics);

#endif
