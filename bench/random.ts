/**
 * Deterministic randomness for the benchmark generator: a small fast PRNG (sfc32, seeded through splitmix32) and
 * a Zipf sampler over a ranked vocabulary. The same seed always yields the same sessions, byte for byte, so a
 * cached database can be reused and two runs measure the same data.
 */

/** sfc32: 128-bit state, passes PractRand to 2^40+, a few ns per draw. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let state = seed >>> 0;
    const splitmix = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    for (let index = 0; index < 12; index++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A new independent stream derived from this one (for per-conversation generators). */
  fork(): Random {
    return new Random(Math.floor(this.next() * 4294967296));
  }
}

/** Samples ranks 0..n-1 with probability proportional to 1 / (rank + 1)^exponent (binary search on the CDF). */
export class ZipfSampler {
  private readonly cdf: Float64Array;

  constructor(size: number, exponent: number) {
    this.cdf = new Float64Array(size);
    let total = 0;
    for (let rank = 0; rank < size; rank++) {
      total += 1 / Math.pow(rank + 1, exponent);
      this.cdf[rank] = total;
    }
    for (let rank = 0; rank < size; rank++) this.cdf[rank]! /= total;
  }

  sample(random: Random): number {
    const target = random.next();
    let low = 0;
    let high = this.cdf.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.cdf[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
