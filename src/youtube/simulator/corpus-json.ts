/**
 * The corpus's videos, channels and categories as the API's JSON resources, with their etags:
 * what the routes put into a list body. The corpus decides what exists and what it counts; this
 * only writes it down, and keeps the resources it wrote (a video's at one period, with its parts).
 */
import { categoriesFor } from './categories.js';
import { type ChannelSeed, type Corpus, digits, type VideoPart, type VideoSeed } from './corpus.js';
import { LEXICON } from './lexicon.js';
import { Lru } from './lru.js';
import { hash32 } from './rng.js';

const YOUTUBE_CHANNEL_ID = 'UCBR8-60-B28hp2BmDPdntcQ';

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function isoDuration(totalSec: number): string {
  const h = Math.floor(totalSec / 3600);
  const m = Math.floor((totalSec % 3600) / 60);
  const s = totalSec % 60;
  return `PT${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s || (!h && !m) ? `${s}S` : ''}`;
}

export class CorpusJson {
  readonly #corpus: Corpus;
  readonly #cache = new Lru<string, string>(60_000);

  constructor(corpus: Corpus) {
    this.#corpus = corpus;
  }

  etag(...parts: ReadonlyArray<string | number>): string {
    return digits(hash32(this.#corpus.seed, 'etag', ...parts), 6) + digits(hash32('etag2', ...parts), 6);
  }

  #thumbnails(kind: 'vi' | 'ch', id: string, hd: boolean): Record<string, object> {
    if (kind === 'ch') {
      const url = (s: number) => `https://yt3.ggpht.com/sim/${id}=s${s}`;
      return {
        default: { url: url(88), width: 88, height: 88 },
        medium: { url: url(240), width: 240, height: 240 },
        high: { url: url(800), width: 800, height: 800 },
      };
    }
    const url = (n: string) => `https://i.ytimg.com/vi/${id}/${n}.jpg`;
    return {
      default: { url: url('default'), width: 120, height: 90 },
      medium: { url: url('mqdefault'), width: 320, height: 180 },
      high: { url: url('hqdefault'), width: 480, height: 360 },
      standard: { url: url('sddefault'), width: 640, height: 480 },
      ...(hd ? { maxres: { url: url('maxresdefault'), width: 1280, height: 720 } } : {}),
    };
  }

  /** A `youtube#video` resource with the given parts, as JSON (cached). */
  videoJson(v: VideoSeed, epoch: number, parts: readonly VideoPart[]): string {
    return this.#cache.getOr(`v|${v.id}|${epoch}|${parts.join(',')}`, () => {
      const t = this.#corpus.traits(v);
      const out: Record<string, unknown> = { kind: 'youtube#video', etag: this.etag(v.id, epoch), id: v.id };
      for (const part of parts) {
        if (part === 'snippet') {
          out.snippet = {
            publishedAt: iso(v.publishedAtMs),
            channelId: v.channel.id,
            title: v.title,
            description: v.description,
            thumbnails: this.#thumbnails('vi', v.id, v.hd),
            channelTitle: v.channel.title,
            ...(t.tags ? { tags: v.tags } : {}),
            categoryId: v.categoryId,
            liveBroadcastContent: t.broadcast,
            ...(t.language ? { defaultLanguage: v.lang } : {}),
            localized: { title: v.title, description: v.description },
            defaultAudioLanguage: v.lang,
          };
        } else if (part === 'contentDetails') {
          out.contentDetails = {
            duration: t.broadcast === 'none' ? isoDuration(v.durationSec) : 'P0D',
            dimension: '2d',
            definition: v.hd ? 'hd' : 'sd',
            caption: String(v.caption),
            licensedContent: v.licensed,
            ...(t.blocked ? { regionRestriction: { blocked: t.blocked } } : {}),
            contentRating: {},
            projection: 'rectangular',
          };
        } else if (part === 'statistics') {
          const c = this.#corpus.counts(v, epoch);
          out.statistics = {
            viewCount: String(c.viewCount),
            ...(c.likeCount === undefined ? {} : { likeCount: String(c.likeCount) }),
            favoriteCount: '0',
            ...(c.commentCount === undefined ? {} : { commentCount: String(c.commentCount) }),
          };
        } else if (part === 'status') {
          out.status = {
            uploadStatus: 'processed',
            privacyStatus: 'public',
            license: 'youtube',
            embeddable: true,
            publicStatsViewable: true,
            madeForKids: false,
          };
        } else if (part === 'liveStreamingDetails' && t.broadcast !== 'none') {
          const chatId = `Cg0KC${v.id}`;
          out.liveStreamingDetails =
            t.broadcast === 'live'
              ? {
                  actualStartTime: iso(v.publishedAtMs),
                  concurrentViewers: String(Math.round(this.#corpus.counts(v, epoch).viewCount / 40) + 1),
                  activeLiveChatId: chatId,
                }
              : { scheduledStartTime: iso(v.publishedAtMs + 86_400_000), activeLiveChatId: chatId };
        }
      }
      return JSON.stringify(out);
    });
  }

  /** A `youtube#videoStats` item of videos.batchGetStats, as JSON (cached). */
  videoStatsJson(v: VideoSeed, epoch: number, parts: readonly VideoPart[]): string {
    return this.#cache.getOr(`s|${v.id}|${epoch}|${parts.join(',')}`, () => {
      const out: Record<string, unknown> = {
        kind: 'youtube#videoStats',
        etag: this.etag('s', v.id, epoch),
        id: v.id,
      };
      for (const part of parts) {
        if (part === 'snippet') out.snippet = { publishTime: iso(v.publishedAtMs) };
        else if (part === 'contentDetails') {
          out.contentDetails = {
            duration: this.#corpus.traits(v).broadcast === 'none' ? isoDuration(v.durationSec) : 'P0D',
          };
        } else if (part === 'statistics') {
          const c = this.#corpus.counts(v, epoch);
          out.statistics = {
            viewCount: String(c.viewCount),
            ...(c.likeCount === undefined ? {} : { likeCount: String(c.likeCount) }),
            ...(c.commentCount === undefined ? {} : { commentCount: String(c.commentCount) }),
          };
        }
      }
      return JSON.stringify(out);
    });
  }

  /** A `youtube#searchResult` for a video, as JSON (cached). */
  searchResultJson(v: VideoSeed): string {
    return this.#cache.getOr(`r|${v.id}`, () =>
      JSON.stringify({
        kind: 'youtube#searchResult',
        etag: this.etag('r', v.id),
        id: { kind: 'youtube#video', videoId: v.id },
        snippet: {
          publishedAt: iso(v.publishedAtMs),
          channelId: v.channel.id,
          title: v.title,
          description: v.description.split('\n')[0] ?? '',
          thumbnails: this.#thumbnails('vi', v.id, false),
          channelTitle: v.channel.title,
          liveBroadcastContent: this.#corpus.traits(v).broadcast,
          publishTime: iso(v.publishedAtMs),
        },
      }),
    );
  }

  /** A `youtube#channel` resource (snippet and/or statistics), as JSON (cached). */
  channelJson(ch: ChannelSeed, parts: readonly string[]): string {
    return this.#cache.getOr(`c|${ch.id}|${parts.join(',')}`, () => {
      const out: Record<string, unknown> = {
        kind: 'youtube#channel',
        etag: this.etag('c', ch.id),
        id: ch.id,
      };
      const description = `${ch.title} – ${LEXICON[ch.lang].tags[ch.kind].join(', ')}`;
      for (const part of parts) {
        if (part === 'snippet') {
          out.snippet = {
            title: ch.title,
            description,
            customUrl: ch.handle,
            publishedAt: iso(ch.publishedAtMs),
            thumbnails: this.#thumbnails('ch', ch.id, false),
            defaultLanguage: ch.lang,
            localized: { title: ch.title, description },
            country: ch.country,
          };
        } else if (part === 'statistics') {
          out.statistics = {
            viewCount: String(ch.views),
            ...(ch.hiddenSubscribers ? {} : { subscriberCount: String(ch.subscribers) }),
            hiddenSubscriberCount: ch.hiddenSubscribers,
            videoCount: String(ch.videoCount),
          };
        }
      }
      return JSON.stringify(out);
    });
  }

  /** The `youtube#videoCategory` items of a region, as JSON. */
  categoryItems(region: string): ReadonlyArray<{ id: string; json: string }> {
    return categoriesFor(region).map((c) => ({
      id: c.id,
      json: this.#cache.getOr(`cat|${c.id}`, () =>
        JSON.stringify({
          kind: 'youtube#videoCategory',
          etag: this.etag('cat', c.id),
          id: c.id,
          snippet: { title: c.title, assignable: c.assignable, channelId: YOUTUBE_CHANNEL_ID },
        }),
      ),
    }));
  }
}
