/* Text helpers shared by every layer but the core: display width of UTF-8 and escaping of
 * untrusted text (libc and utf8proc only). */
#ifndef ATTNSTEP_TEXT_H
#define ATTNSTEP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Columns a UTF-8 string takes on a terminal: the sum of text_char_width over its characters,
 * an invalid byte counting 4 (it is shown as \xNN). Independent of the locale, so that plain
 * output lines up the same everywhere. */
int text_width(const char *utf8);

/* Columns one code point takes, from utf8proc's Unicode tables: 2 for East Asian Wide and
 * Fullwidth characters and emoji shown as emoji, 0 for combining marks, joiners and controls
 * (which text_escape never lets through raw), 1 otherwise. The one width rule of every view. */
int text_char_width(unsigned codepoint);

/* The one set of characters that lesson text may never send to a terminal as they are: C0
 * and C1 controls, DEL, the bidirectional overrides, isolates and marks, and the zero-width
 * and format characters (U+200B, U+200D, U+2028, U+2029, U+FEFF, U+2060-2064, U+206A-206F,
 * U+180E, U+FFF9-FFFB). Key scripts and classroom names refuse them; --json writes them as
 * \uXXXX. */
bool text_is_control(unsigned codepoint);

/* The tag characters U+E0000-E007F, invisible too: text_escape writes them as \ue0041, like
 * the controls. Apart from text_is_control because --json writes a control as one \uXXXX,
 * which cannot hold them (they would need a surrogate pair there). */
bool text_is_tag(unsigned codepoint);

/* Copies utf8 into buffer with control characters (text_is_control), tag characters and
 * invalid bytes written as escapes such as \x1b, \u202e or \u200b, so that untrusted lesson
 * text can never drive the terminal or hide from its reader; a zero-width joiner between two
 * emoji (one picture: 👩‍💻) is kept. Returns the length it wanted (as snprintf). */
int text_escape(const char *utf8, char *buffer, size_t size);

/* The same, but line breaks ('\n') are kept as they are: narration written as a YAML literal
 * block keeps its lines. */
int text_escape_lines(const char *utf8, char *buffer, size_t size);

/* The same for Markdown (--markdown): control characters escaped as text_escape does, then
 * every character Markdown (CommonMark and pandoc's) or HTML could read as syntax written so
 * that it shows as itself: '<', '>' and '&' as HTML entities, the punctuation that is syntax
 * anywhere (`*_[]|#\ ~^$@{}) with a backslash, and - + = : % at the start of a line and . )
 * after its leading digits likewise. The text is taken to start a line. Line breaks are kept
 * when keep_lines. For text outside code spans and code blocks; table cells included ('|'
 * becomes "\|"). Returns the length it wanted (as snprintf). */
int text_escape_markdown(const char *utf8, bool keep_lines, char *buffer, size_t size);

/* The same for XML and HTML (the SVG figures and their index.html): control, format and tag
 * characters and invalid bytes escaped as text_escape does (so the result is always valid XML
 * 1.0 text and no bidirectional override can reorder the figure), then < > & " ' written as
 * entities, for character data and for attribute values alike. Line breaks are kept when
 * keep_lines. Returns the length it wanted (as snprintf). */
int text_escape_xml(const char *utf8, bool keep_lines, char *buffer, size_t size);

/* Writes utf8 to stream escaped as text_escape does (line breaks kept when keep_newlines),
 * without allocating: for messages that echo untrusted text (paths, tokens, arguments) on
 * stderr and for text written straight to stdout. Returns 0, or EOF when a write failed. */
int text_write_escaped(FILE *stream, const char *utf8, bool keep_newlines);

/* Decodes one UTF-8 character at s, storing it in *codepoint; returns its length in bytes, or 0
 * for an invalid or truncated sequence. */
int text_decode(const char *s, unsigned *codepoint);

#endif
