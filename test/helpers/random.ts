/** Random cases that are the same in every run. */

/** A deterministic stream of numbers in [0, 1) (a linear congruential generator): the same cases every run. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}
