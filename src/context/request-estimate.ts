// Sizes a request without a tokenizer: the provider's count of the previous request plus an estimate of what was added, trusted only far from the limit.
import { MAX_CALIBRATION, type WindowState } from "../journal/window-state.js";

/** With a provider's count to go by, the estimate is trusted up to this share of the room: nearer, the tokenizer counts. */
const ESTIMATE_SHARE = 0.9;

/**
 * Without one (the first request, a provider that reports no usage or an unbelievable one), the
 * three-bytes-a-token estimate is trusted up to this share: text of 1.6 bytes a token (hashes,
 * random ids) is the worst case the estimate can miss.
 */
const UNCALIBRATED_SHARE = 0.5;

type LastEstimate = WindowState["lastEstimate"];

/** The provider's tokens per estimated token of the previous request, when believable; else null. */
function providerRatio(last: LastEstimate): number | null {
  if (last === null || last.estimated <= 0) return null;
  const ratio = last.reported / last.estimated;
  return ratio >= 1 / MAX_CALIBRATION && ratio <= MAX_CALIBRATION ? ratio : null;
}

/** The factor from estimated tokens to the provider's, for sizing what a window keeps: the believable ratio, else 1. */
export function estimateScale(last: LastEstimate): number {
  return providerRatio(last) ?? 1;
}

/**
 * The largest estimate (three bytes a token, before any scaling) a request may have and still be
 * sent without a tokenizer, in a window leaving `room` tokens. With the previous request's count,
 * a request is predicted as that count plus the estimate of what was added (never scaled below
 * one estimated token each); a smaller request (the window moved) as its estimate at the previous ratio.
 */
export function estimateRoom(room: number, last: LastEstimate): number {
  const ratio = providerRatio(last);
  if (last === null || ratio === null) return room * UNCALIBRATED_SHARE;
  const target = room * ESTIMATE_SHARE;
  if (target <= last.reported) return target / ratio;
  return last.estimated + (target - last.reported) / Math.max(1, ratio);
}
