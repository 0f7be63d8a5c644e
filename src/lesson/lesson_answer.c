/* Where a question's answer is written down in a text (lesson_answer.h): numbers are read as a
 * student reads them (a sign, digits, a decimal point, a percent sign), tokens as whole words. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lesson_answer.h"
#include "lesson_text.h"

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* A byte that continues a word, so that "d_k2" or "W_Q" holds no number and "cats" no "cat". */
static bool word_byte(char c) {
    return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static const char MINUS[] = "\xe2\x88\x92";  /* U+2212, as the program writes negative numbers */

/* ---- numbers ---- */

typedef struct {
    size_t start, end;   /* the bytes written, sign and percent sign included */
    double value;        /* as written: 63 for "63%" */
    int decimals;
    bool percent;
} written_number;

/* The number that starts at text[i] (a digit not inside a word or another number), if any. */
static bool number_at(const char *text, size_t i, written_number *n) {
    if (!is_digit(text[i]) || (i > 0 && (word_byte(text[i - 1]) || text[i - 1] == '.')))
        return false;
    size_t end = i;
    while (is_digit(text[end])) end++;
    n->decimals = 0;
    if (text[end] == '.' && is_digit(text[end + 1]))
        for (end++; is_digit(text[end]); end++) n->decimals++;
    if (word_byte(text[end]) || end - i > 40) return false;
    char digits[48];
    memcpy(digits, text + i, end - i);
    digits[end - i] = '\0';
    if (lesson_parse_number(digits, &n->value) != LESSON_NUMBER_OK) return false;
    n->start = i;
    if (i > 0 && text[i - 1] == '-') n->start = i - 1;
    else if (i >= 3 && memcmp(text + i - 3, MINUS, 3) == 0) n->start = i - 3;
    if (n->start < i) n->value = -n->value;
    n->percent = text[end] == '%';
    n->end = end + (n->percent ? 1 : 0);
    return true;
}

/* Whether x rounds as v does at `decimals` decimals. */
static bool same_rounding(double x, double v, int decimals) {
    double unit = pow(10.0, decimals);
    return fabs(round(x * unit) - round(v * unit)) < 0.5;
}

/* Whether the number at text[start] follows a word that makes it a label: "head 1", "step 2". */
static bool labels_number(const char *text, size_t start) {
    static const char *const labels[] = {
        "head ", "heads ", "step ", "position ", "feature ", "column ", "row ", "line ",
        "layer ", "word ", "tile ", "group ", "dimension ",
    };
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        size_t length = strlen(labels[i]);
        /* "Head 1" at a sentence's start too */
        if (start >= length && lower(text[start - length]) == labels[i][0]
            && memcmp(text + start - length + 1, labels[i] + 1, length - 1) == 0)
            return true;
    }
    return false;
}

static bool number_tells(const lesson_answer *a, const char *text, const written_number *n) {
    double scale = n->percent ? 100.0 : 1.0, v = a->value * scale;
    /* a whole number tells only an answer asked as a whole number, and never as a label */
    if (n->decimals == 0 && !n->percent && (a->decimals != 0 || labels_number(text, n->start)))
        return false;
    if (fabs(n->value - v) <= a->tolerance * scale * (1.0 + 1e-9) + 1e-12) return true;
    if (!n->percent && n->decimals == a->decimals && same_rounding(n->value, v, n->decimals))
        return true;
    if (!a->every_rounding) return false;
    if (n->percent) return n->decimals <= 2 && same_rounding(n->value, v, n->decimals);
    return n->decimals >= 1 && n->decimals <= 4 && same_rounding(n->value, v, n->decimals);
}

static bool find_number(const lesson_answer *a, const char *text, size_t from, size_t *at,
                        size_t *length) {
    for (size_t i = from; text[i]; i++) {
        written_number n;
        if (!number_at(text, i, &n)) continue;
        if (number_tells(a, text, &n)) {
            *at = n.start;
            *length = n.end - n.start;
            return true;
        }
        i = n.end - 1;
    }
    return false;
}

/* ---- tokens ---- */

/* Whether text[i] starts a sentence's end: . ! ? followed by a space, a quote or the end. */
static bool sentence_end(const char *text, size_t i) {
    if (text[i] != '.' && text[i] != '!' && text[i] != '?' && text[i] != '\n') return false;
    char next = text[i + 1];
    return next == '\0' || next == ' ' || next == '\n' || next == '"' || next == '\'';
}

/* Whether text at p starts with the sentence, ignoring ASCII case ("The cat …" quotes "the
 * cat …"). */
static bool quotes_at(const char *p, const char *sentence, size_t length) {
    for (size_t j = 0; j < length; j++)
        if (!p[j] || lower(p[j]) != lower(sentence[j])) return false;
    return true;
}

/* Whether byte i lies inside a quotation of the lesson's own sentence. */
static bool in_sentence_quote(const lesson_answer *a, const char *text, size_t i) {
    if (!a->sentence || !*a->sentence) return false;
    size_t length = strlen(a->sentence);
    for (size_t start = i + 1 > length ? i + 1 - length : 0; start <= i; start++)
        if (quotes_at(text + start, a->sentence, length)) return true;
    return false;
}

/* Whether word is one English writes in every sentence ("of", "the"): prose cannot tell such a
 * token from the word, so only a quoted one ("of") names it. */
static bool common_word(const char *word) {
    static const char *const common[] = {
        "a", "an", "and", "as", "at", "by", "for", "he", "in", "is", "it", "of", "on", "or",
        "she", "that", "the", "to", "was", "with",
    };
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        if (strcmp(word, common[i]) == 0) return true;
    return false;
}

static bool quote_byte(char c) {
    return c == '"' || c == '\'' || c == '`';
}

/* Whether text at p spells word, its first letter in either case ("Bank" starts a sentence). */
static bool spells(const char *p, const char *word, size_t length) {
    return lower(p[0]) == lower(word[0]) && memcmp(p + 1, word + 1, length - 1) == 0;
}

/* The first whole-word occurrence of word in text[from, end), outside quotations of the
 * lesson's sentence, or `end`. */
static size_t find_word(const lesson_answer *a, const char *text, size_t from, size_t end,
                        const char *word) {
    size_t length = strlen(word);
    if (length == 0) return end;
    bool quoted = common_word(word);
    for (size_t i = from; i + length <= end; i++) {
        if (!spells(text + i, word, length)) continue;
        bool whole = (i == 0 || !word_byte(text[i - 1])) && !word_byte(text[i + length]);
        if (quoted) whole = i > 0 && quote_byte(text[i - 1]) && quote_byte(text[i + length]);
        if (whole && !in_sentence_quote(a, text, i)) return i;
    }
    return end;
}

/* The answer's token in text[start, end), a sentence that names the focus row too. */
static size_t token_in_sentence(const lesson_answer *a, const char *text, size_t start,
                                size_t end) {
    size_t token = find_word(a, text, start, end, a->token);
    if (token == end || !a->row) return token;
    size_t row = find_word(a, text, start, end, a->row);
    /* a row that is its own answer is named in every sentence about it: words cannot tell
     * whether one says where it looks */
    return row == end || strcmp(a->row, a->token) == 0 ? end : token;
}

static bool find_token(const lesson_answer *a, const char *text, size_t from, size_t *at,
                       size_t *length) {
    size_t start = from;
    for (size_t i = from;; i++) {
        if (text[i] && !sentence_end(text, i)) continue;
        size_t found = token_in_sentence(a, text, start, i);
        if (found < i) {
            *at = found;
            *length = strlen(a->token);
            return true;
        }
        if (!text[i]) return false;
        start = i + 1;
    }
}

bool lesson_answer_find(const lesson_answer *a, const char *text, size_t from, size_t *at,
                        size_t *length) {
    if (!text || from > strlen(text)) return false;
    if (a->numeric) return find_number(a, text, from, at, length);
    return a->token && find_token(a, text, from, at, length);
}

int lesson_answer_decimals(const char *text) {
    written_number n;
    if (!text) return -1;
    size_t skip = text[0] == '-' || text[0] == '+' ? 1 : 0;
    if (!number_at(text, skip, &n) || text[n.end]) return -1;
    return n.decimals;
}

/* ---- a lesson's questions ---- */

static bool has_focus(const lesson_step *step) {
    return step->focus_row >= 0 && step->focus_col >= 0;
}

void lesson_answer_of(const trace *t, const lesson_step *asked, const char *sentence,
                      char *row, size_t size, lesson_answer *a) {
    const char *choice = asked->n_choices > 0 && asked->answer_choice >= 0
                       ? asked->choices[asked->answer_choice] : NULL;
    *a = (lesson_answer){ .numeric = true, .value = asked->answer,
                          .tolerance = asked->tolerance, .sentence = sentence,
                          .decimals = lesson_answer_decimals(choice ? choice
                                                                    : asked->answer_text) };
    if (choice && lesson_parse_number(choice, &a->value) != LESSON_NUMBER_OK) {
        *a = (lesson_answer){ .token = choice, .sentence = sentence };
        if (has_focus(asked))
            a->row = trace_axis_label(t, stage_get(asked->stage)->rows, asked->focus_row, row,
                                      size);
        return;
    }
    if (has_focus(asked)) {
        int head = stage_get(asked->stage)->per_head && asked->head > 0 ? asked->head : 1;
        a->value = trace_value(t, asked->stage, head, asked->focus_row, asked->focus_col);
    }
    /* a key of `auto` asks at the precision its tolerance allows: 0.005 is two decimals */
    if (a->decimals < 0 && a->tolerance > 0)
        a->decimals = (int)ceil(-log10(2.0 * a->tolerance) - 1e-9);
    if (choice) a->tolerance = 0.5 * pow(10.0, -(a->decimals > 0 ? a->decimals : 0));
}

char *lesson_sentence(const lesson *l) {
    size_t size = 1;
    for (int i = 0; i < l->n_tokens; i++) size += strlen(l->tokens[i]) + 1;
    char *out = malloc(size);
    if (!out) return NULL;
    char *end = out;
    for (int i = 0; i < l->n_tokens; i++) {
        size_t length = strlen(l->tokens[i]);
        if (i) *end++ = ' ';
        memcpy(end, l->tokens[i], length);
        end += length;
    }
    *end = '\0';
    return out;
}
