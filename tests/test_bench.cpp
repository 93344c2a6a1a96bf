#define BOOST_TEST_MODULE bench
// bench's statistics (core/stats.h, bench/harness.h): the median, and the interval for a median
// over rounds against binomial probabilities worked out here another way (Pascal's rule, row by
// row, halved) and against values derived by hand.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstddef>
#include <vector>

#include "bench/harness.h"
#include "core/stats.h"

namespace convcheck {
namespace {

// P(Binomial(n, 1/2) = j) for j <= n, by p_n(j) = (p_{n-1}(j-1) + p_{n-1}(j)) / 2.
std::vector<double> binomial_row(std::size_t n) {
  std::vector<double> p{1.0};
  for (std::size_t r = 1; r <= n; ++r) {
    std::vector<double> q(r + 1, 0.0);
    for (std::size_t j = 0; j <= r; ++j)
      q[j] = ((j > 0 ? p[j - 1] : 0.0) + (j < r ? p[j] : 0.0)) / 2;
    p = std::move(q);
  }
  return p;
}

// The interval [x_(k), x_(n+1-k)] covers the median with P(k <= B <= n - k): the central sum.
double coverage(const std::vector<double>& row, std::size_t k) {
  double c = 0;
  for (std::size_t j = k; j + k <= row.size() - 1; ++j) c += row[j];
  return c;
}

// n values 0..n-1, shuffled (so that the routine must sort them), each scaled by 0.5 + small.
std::vector<double> shuffled(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.5 + static_cast<double>((i * 7919) % n) / 1000;
  return v;
}

BOOST_AUTO_TEST_CASE(order_statistics_match_the_binomial_coverage) {
  for (std::size_t n : {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 20, 31, 100, 1000}) {
    const std::vector<double> row = binomial_row(n);
    std::size_t k = 1;  // the largest k reaching 95 %, else 1
    for (std::size_t j = 1; 2 * j <= n; ++j)
      if (coverage(row, j) >= 0.95) k = j;
    std::vector<double> v = shuffled(n), sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const MedianInterval m = median_interval(v);
    BOOST_TEST_CONTEXT("n = " << n << ", k = " << k) {
      BOOST_TEST(m.lo == sorted[k - 1]);
      BOOST_TEST(m.hi == sorted[n - k]);
      BOOST_TEST(std::fabs(m.level - coverage(row, k)) < 1e-9);
      BOOST_TEST((n < 6 || m.level >= 0.95));
    }
  }
}

BOOST_AUTO_TEST_CASE(hand_derived_levels) {
  // 10 rounds: the 2nd of each end, 1 - 2 (1 + 10) / 1024; the 3rd would cover only
  // 1 - 2 (1 + 10 + 45) / 1024 = 89 %.
  MedianInterval m = median_interval({9, 1, 8, 2, 7, 3, 6, 4, 5, 10});
  BOOST_TEST(m.lo == 2);
  BOOST_TEST(m.hi == 9);
  BOOST_TEST(std::fabs(m.level - (1 - 22.0 / 1024)) < 1e-12);
  // 5 rounds cannot reach 95 %: min and max, at 1 - 2 / 32.
  m = median_interval({3, 1, 2, 5, 4});
  BOOST_TEST((m.lo == 1 && m.hi == 5));
  BOOST_TEST(std::fabs(m.level - 0.9375) < 1e-12);
  // One value or none: no interval (level 0; bench writes null).
  BOOST_TEST(median_interval({2.5}).level == 0);
  BOOST_TEST(median_interval({}).level == 0);
}

BOOST_AUTO_TEST_CASE(median_by_hand) {
  // The one median (core/stats.h): odd counts take the middle, even ones the mean of the two
  // middle values (not the upper one), unsorted input is sorted, none is 0.
  BOOST_TEST(median({9, 1, 5}) == 5);
  BOOST_TEST(median({4, 1, 3, 2}) == 2.5);
  BOOST_TEST(median({7}) == 7);
  BOOST_TEST(median({}) == 0);
  BOOST_TEST(median({-1, -3}) == -2);
}

BOOST_AUTO_TEST_CASE(many_rounds_stay_finite) {
  // A million values: the binomial terms underflow one by one, the tail does not go wrong.
  const MedianInterval m = median_interval(std::vector<double>(1000000, 1.0));
  BOOST_TEST(m.level >= 0.95);
  BOOST_TEST(m.level < 0.951);
  BOOST_TEST((m.lo == 1 && m.hi == 1));
}

}  // namespace
}  // namespace convcheck
