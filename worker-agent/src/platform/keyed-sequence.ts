/**
 * Tasks run one after another per key, in the order they were handed over, while the caller
 * goes on without waiting: one attempt's reports reach the stream in the order they were made
 * (`accepted` before `started` before `encoded`), and its record's writes land in the order
 * they were asked for, though the accept path waits for neither.
 */
export class KeyedSequence {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `task` after every earlier task of `key` has settled; its own outcome is returned. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
