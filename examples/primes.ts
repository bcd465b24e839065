// A computation that takes a noticeable time: the first run pays for it, a repeat is a cache hit.
// ./execache run examples/primes.ts --context '{"below": 3000000}'
const below: number = context.below ?? 2_000_000;
const sieve = new Uint8Array(below);
let count = 0;
let largest = 0;
for (let i = 2; i < below; i++) {
  if (sieve[i]) continue;
  count++;
  largest = i;
  for (let j = i * i; j < below; j += i) sieve[j] = 1;
}
return { below, count, largest };
