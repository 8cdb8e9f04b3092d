/**
 * Heartbeat messages, without I/O. The Manager drops a heartbeat whose sentAt is not later
 * than the last one it accepted (a replay), so sentAt must strictly increase even when the
 * wall clock stalls or steps back (NTP), or two beats fall in one millisecond.
 */
import { type Heartbeat, PROTOCOL_VERSION } from "@tjm/protocol";

export class SentAtClock {
  private last: number | undefined;

  /** The next sentAt in epoch milliseconds: `now`, or 1 ms after the previous one if that is later. */
  next(now: number): number {
    this.last = this.last === undefined ? now : Math.max(now, this.last + 1);
    return this.last;
  }
}

export function buildHeartbeat(
  instance: { workerId: string; instanceId: string },
  sentAt: number,
  activeAttempts: Heartbeat["activeAttempts"],
  freeCapacity: number,
): Heartbeat {
  return {
    protocolVersion: PROTOCOL_VERSION,
    workerId: instance.workerId,
    instanceId: instance.instanceId,
    sentAt: new Date(sentAt).toISOString(),
    activeAttempts,
    freeCapacity,
  };
}
