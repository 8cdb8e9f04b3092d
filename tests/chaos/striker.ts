/**
 * Delivers each target's fault once, to one Worker slot at a time, however its triggers race.
 * A `download` point's reads (ffprobe's and ffmpeg's, through the agent's relay) reach the store
 * together, and each looks up the attempt's slot before striking: without a claim taken before
 * that lookup, both killed the agent and both started it again, two live instances of one Worker
 * on one state directory. The older kept pulling the Worker's commands, and the leases it took
 * were accepted under an instance the Manager had replaced (a stale report: DISPATCH_TIMEOUT).
 */

export interface Fault {
  /** The fault took effect (the agent is dead, or frozen and thawed again). */
  delivered: Promise<void>;
  /** The slot can take another fault (its agent started again). */
  recovered: Promise<void>;
}

export interface StrikerHooks<Target, Slot> {
  /** The slot running the attempt, looked up while other strikes go on. */
  slotOf(attemptId: string): Promise<Slot | undefined>;
  fault(slot: Slot, target: Target, attemptId: string): Fault;
}

export class Striker<Target, Slot> {
  /** Targets struck, or being looked up for a strike. */
  private readonly claimed = new Set<Target>();
  /** Slots faulted and not yet recovered. */
  private readonly faulted = new Set<Slot>();
  private readonly recoveries: Promise<void>[] = [];

  constructor(private readonly hooks: StrikerHooks<Target, Slot>) {}

  /**
   * Faults the attempt's slot unless the target was struck already, or the slot cannot be
   * found or is still recovering (the target may then be struck later). True once delivered.
   */
  async strike(target: Target, attemptId: string): Promise<boolean> {
    if (this.claimed.has(target)) return false;
    this.claimed.add(target);
    const slot = await this.hooks.slotOf(attemptId);
    if (slot === undefined || this.faulted.has(slot)) {
      this.claimed.delete(target);
      return false;
    }
    this.faulted.add(slot);
    const { delivered, recovered } = this.hooks.fault(slot, target, attemptId);
    const recovery = recovered.finally(() => this.faulted.delete(slot));
    // Read by settled(); until then a failed restart must not count as unhandled.
    recovery.catch(() => {});
    this.recoveries.push(recovery);
    await delivered;
    return true;
  }

  /** Every slot recovered (restarts finished); rejects if one did not. */
  async settled(): Promise<void> {
    await Promise.all(this.recoveries);
  }
}
