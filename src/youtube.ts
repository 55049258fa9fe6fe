/**
 * The YouTube application: `quota-guard/youtube`, the package's subpath for the YouTube Data API
 * client and the jobs built on it.
 */

export {
  createYouTubeClient,
  openJobContext,
  runBackfill,
  runTrending,
  type YouTubeClient,
  type YouTubeClientOptions,
} from './index.js';
