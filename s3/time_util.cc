#include "s3/time_util.h"

#include <array>
#include <cctype>
#include <cstdio>

#include "base/strings.h"

namespace bucketfs::s3 {
namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kWeekdays = {"Sun", "Mon", "Tue", "Wed",
                                                       "Thu", "Fri", "Sat"};

// A tiny cursor over the text; every reader returns false on mismatch.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool Digits(size_t n, int& out) {
    if (s_.size() < n) return false;
    int v = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s_[i]))) return false;
      v = v * 10 + (s_[i] - '0');
    }
    out = v;
    s_.remove_prefix(n);
    return true;
  }
  bool Char(char c) {
    if (s_.empty() || s_[0] != c) return false;
    s_.remove_prefix(1);
    return true;
  }
  bool Peek(char c) const { return !s_.empty() && s_[0] == c; }
  void SkipSpaces() {
    while (!s_.empty() && s_[0] == ' ') s_.remove_prefix(1);
  }
  // Reads a 3-letter month name; out = 1..12.
  bool Month(int& out) {
    if (s_.size() < 3) return false;
    for (size_t i = 0; i < kMonths.size(); ++i) {
      if (s_.substr(0, 3) == kMonths[i]) {
        out = static_cast<int>(i) + 1;
        s_.remove_prefix(3);
        return true;
      }
    }
    return false;
  }
  // Skips letters (a weekday name) and returns how many.
  size_t Letters() {
    size_t n = 0;
    while (n < s_.size() && std::isalpha(static_cast<unsigned char>(s_[n]))) ++n;
    s_.remove_prefix(n);
    return n;
  }
  bool AtEnd() const { return s_.empty(); }
  std::string_view rest() const { return s_; }

 private:
  std::string_view s_;
};

std::optional<SysTime> Compose(int y, int mo, int d, int h, int mi, int s, int ms) {
  const std::chrono::year_month_day ymd{std::chrono::year{y},
                                        std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  // Seconds up to 60 accept a leap second (folded into the next minute).
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  // SysTime counts nanoseconds in 64 bits (about 1678 to 2261): a date a store
  // sends outside that is refused rather than overflowed.
  if (y < 1678 || y > 2261) return std::nullopt;
  const auto tp =
      std::chrono::sys_days{ymd} + hours(h) + minutes(mi) + seconds(s) + milliseconds(ms);
  return std::chrono::time_point_cast<SysTime::duration>(tp);
}

bool ReadClock(Cursor& c, int& h, int& mi, int& s) {
  return c.Digits(2, h) && c.Char(':') && c.Digits(2, mi) && c.Char(':') && c.Digits(2, s);
}

}  // namespace

std::optional<SysTime> ParseIso8601(std::string_view text) {
  text = base::Trim(text);
  Cursor c(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, ms = 0;
  if (!(c.Digits(4, y) && c.Char('-') && c.Digits(2, mo) && c.Char('-') && c.Digits(2, d))) {
    return std::nullopt;
  }
  if (!(c.Char('T') || c.Char('t') || c.Char(' '))) return std::nullopt;
  if (!ReadClock(c, h, mi, s)) return std::nullopt;
  if (c.Char('.')) {
    // Fractional seconds: keep milliseconds, accept any number of digits.
    int digits = 0, v = 0;
    int digit = 0;
    while (c.Digits(1, digit)) {
      if (digits < 3) v = v * 10 + digit;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 3; ++i) v *= 10;
    ms = v;
  }
  int offset_minutes = 0;
  if (c.Char('Z') || c.Char('z')) {
  } else if (c.Peek('+') || c.Peek('-')) {
    int sign = 1;
    if (c.Char('-')) {
      sign = -1;
    } else {
      c.Char('+');
    }
    int oh = 0, om = 0;
    if (!c.Digits(2, oh)) return std::nullopt;
    c.Char(':');
    if (!c.Digits(2, om)) return std::nullopt;
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;  // no zone: ambiguous, S3 always sends one
  }
  if (!c.AtEnd()) return std::nullopt;
  auto t = Compose(y, mo, d, h, mi, s, ms);
  if (!t) return std::nullopt;
  return *t - minutes(offset_minutes);
}

std::optional<SysTime> ParseHttpDate(std::string_view text) {
  Cursor c(text);
  c.SkipSpaces();
  const size_t weekday_len = c.Letters();
  if (weekday_len < 3) return std::nullopt;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (c.Char(',')) {
    c.SkipSpaces();
    if (weekday_len == 3) {
      // RFC 1123: "Sun, 06 Nov 1994 08:49:37 GMT" (accept a 1-digit day).
      if (!(c.Digits(2, d) || c.Digits(1, d))) return std::nullopt;
      c.SkipSpaces();
      if (!c.Month(mo)) return std::nullopt;
      c.SkipSpaces();
      if (!c.Digits(4, y)) return std::nullopt;
    } else {
      // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT".
      if (!(c.Digits(2, d) && c.Char('-') && c.Month(mo) && c.Char('-') && c.Digits(2, y))) {
        return std::nullopt;
      }
      y += y < 70 ? 2000 : 1900;
    }
    c.SkipSpaces();
    if (!ReadClock(c, h, mi, s)) return std::nullopt;
    c.SkipSpaces();
    if (!(c.rest() == "GMT" || c.rest() == "UTC" || c.rest() == "Z")) return std::nullopt;
  } else {
    // asctime: "Sun Nov  6 08:49:37 1994".
    c.SkipSpaces();
    if (!c.Month(mo)) return std::nullopt;
    c.SkipSpaces();
    if (!(c.Digits(2, d) || c.Digits(1, d))) return std::nullopt;
    c.SkipSpaces();
    if (!ReadClock(c, h, mi, s)) return std::nullopt;
    c.SkipSpaces();
    if (!c.Digits(4, y)) return std::nullopt;
    c.SkipSpaces();
    if (!c.AtEnd()) return std::nullopt;
  }
  return Compose(y, mo, d, h, mi, s, 0);
}

std::string FormatIso8601(SysTime t) {
  const auto day = std::chrono::floor<days>(t);
  const std::chrono::year_month_day ymd{day};
  const auto ms_of_day = std::chrono::duration_cast<milliseconds>(t - day).count();
  char buf[64];
  std::snprintf(
      buf, sizeof(buf), "%04d-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
      static_cast<long long>(ms_of_day / 3600000), static_cast<long long>(ms_of_day / 60000 % 60),
      static_cast<long long>(ms_of_day / 1000 % 60), static_cast<long long>(ms_of_day % 1000));
  return buf;
}

std::string FormatHttpDate(SysTime t) {
  const auto day = std::chrono::floor<days>(t);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::weekday wd{day};
  const auto secs = std::chrono::duration_cast<seconds>(t - day).count();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s, %02u %s %04d %02lld:%02lld:%02lld GMT",
                std::string(kWeekdays[wd.c_encoding()]).c_str(), static_cast<unsigned>(ymd.day()),
                std::string(kMonths[static_cast<unsigned>(ymd.month()) - 1]).c_str(),
                static_cast<int>(ymd.year()), static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

}  // namespace bucketfs::s3
