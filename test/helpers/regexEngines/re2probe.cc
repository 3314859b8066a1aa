// Reads hex-encoded UTF-8 lines on stdin: a pattern, then the texts to try.
// Prints "ok" (or "error <why>" and stops) for the pattern, then 1 or 0 per
// text: whether RE2 finds the pattern in it (JSON Schema's `pattern` is a
// search, not a whole match). Built by regexEngines.ts for the pattern test.
#include <re2/re2.h>
#include <iostream>
#include <string>

static std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

int main() {
  std::string line;
  if (!std::getline(std::cin, line)) return 2;
  RE2 re(unhex(line), RE2::Quiet);
  if (!re.ok()) {
    std::cout << "error " << re.error() << std::endl;
    return 0;
  }
  std::cout << "ok\n";
  while (std::getline(std::cin, line)) std::cout << (RE2::PartialMatch(unhex(line), re) ? '1' : '0') << '\n';
  return 0;
}
