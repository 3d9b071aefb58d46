// The answers of the filters' shape searches, remembered: a search costs
// milliseconds to tens of milliseconds, and a program creating many filters
// asks for the same few targets again and again. Bounded (the first 256
// distinct questions are kept; later ones are answered by searching each
// time) and safe to share between threads.
#ifndef TF_LIB_BLOOM_CHOICE_MEMO_HPP
#define TF_LIB_BLOOM_CHOICE_MEMO_HPP

#include <mutex>
#include <utility>
#include <vector>

namespace tf {
namespace bloom {

// Question: a type with ==; Answer: copyable.
template <class Question, class Answer>
class ChoiceMemo {
   public:
    static constexpr size_t kCapacity = 256;

    bool find(const Question &q, Answer *out) {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto &e : memo_)
            if (e.first == q) {
                *out = e.second;
                return true;
            }
        return false;
    }
    void remember(const Question &q, const Answer &a) {
        std::lock_guard<std::mutex> lock(mu_);
        if (memo_.size() < kCapacity) memo_.emplace_back(q, a);
    }

   private:
    std::mutex mu_;
    std::vector<std::pair<Question, Answer>> memo_;
};

}  // namespace bloom
}  // namespace tf

#endif
