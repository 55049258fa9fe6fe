/**
 * Word lists and title templates the simulator builds its synthetic videos from: five languages
 * here and nine more in lexicon-world.ts (Japanese, Korean, Chinese, Thai, Russian, Arabic,
 * Hebrew, Tamil, Bengali), with diacritics, Devanagari and emoji (including ZWJ sequences and skin-tone modifiers) so that
 * everything downstream (the cache's tokenizer, search, logs) meets realistic text. All names are
 * invented or generic.
 */

import type { Kind, Lexicon } from './lexicon-types.js';
import { WORLD_LEXICON, WORLD_REGION_LANGS, type WorldLang } from './lexicon-world.js';

export type { Kind, Lexicon };

/** Languages with word lists here; the other scripts' lists are in lexicon-world.ts. */
export type Lang = 'en' | 'de' | 'fr' | 'pt' | 'hi' | WorldLang;

export const KIND_CATEGORY: Record<Kind, readonly string[]> = {
  music: ['10'],
  gaming: ['20'],
  movies: ['30'],
  sports: ['17'],
  vlog: ['22', '24', '23'],
  howto: ['26', '27'],
  news: ['25'],
  tech: ['28'],
};

/** Share of each kind among new videos. */
export const KIND_WEIGHTS: Record<Kind, number> = {
  music: 26,
  gaming: 18,
  movies: 9,
  sports: 9,
  vlog: 17,
  howto: 7,
  news: 8,
  tech: 6,
};

/** Category ids that have a trending chart of their own (Music, Gaming, Movies). */
export const CHART_CATEGORIES: readonly string[] = ['10', '20', '30'];

/** Languages spoken in a region's chart, with weights. Unknown regions get English. */
export const REGION_LANGS: Record<string, ReadonlyArray<readonly [Lang, number]>> = {
  US: [['en', 1]],
  GB: [['en', 1]],
  AU: [['en', 1]],
  CA: [
    ['en', 0.7],
    ['fr', 0.3],
  ],
  DE: [['de', 1]],
  AT: [['de', 1]],
  CH: [
    ['de', 0.7],
    ['fr', 0.3],
  ],
  FR: [['fr', 1]],
  BE: [['fr', 1]],
  IN: [
    ['hi', 0.4],
    ['en', 0.35],
    ['ta', 0.13],
    ['bn', 0.12],
  ],
  BR: [['pt', 1]],
  PT: [['pt', 1]],
  ...WORLD_REGION_LANGS,
};

export function langsOf(region: string): ReadonlyArray<readonly [Lang, number]> {
  return REGION_LANGS[region] ?? [['en', 1]];
}

export const EMOJI: readonly string[] = [
  '🔥',
  '😱',
  '🎶',
  '🥶',
  '😂',
  '🤯',
  '❤️',
  '🚀',
  '⚽',
  '🎮',
  '🍕',
  '✨',
  '👀',
  '🏆',
  '😍',
  '🙌🏽',
  '👩‍🍳',
  '🧑🏾‍💻',
  '🇧🇷',
];

/** Games appear in every language, as they do in real charts. */
export const GAMES: readonly string[] = [
  'Minecraft',
  'Pokémon',
  'Roblox',
  'Fortnite',
  'EA FC 26',
  'Skyforge Legends',
  'Hollow Pines',
  'Neon Drift',
  'Kart Rivals',
  'Château Siege',
];

export const LEXICON: Record<Lang, Lexicon> = {
  ...WORLD_LEXICON,
  en: {
    artists: [
      'Maya Brooks',
      'The Velvet Lines',
      'Jaxon Reed',
      'Lila Hart',
      'Noah Quinn',
      'Sienna Vale',
      'Big Harbour',
      'Cassie Monroe',
    ],
    songs: [
      'Midnight Drive',
      'Golden Hour',
      'Paper Hearts',
      'Running Back to You',
      'Neon Summer',
      'Wildfire',
      'Closer Than Ever',
      'Salt & Honey',
    ],
    movies: [
      'The Last Lighthouse',
      'Orbit Seven',
      'Shadow Protocol',
      'A Quiet Summer',
      'Wolves of Arden',
      'Glass Harbor',
    ],
    foods: ['burger', 'pizza', 'taco', 'ramen', 'donut', 'hot dog'],
    cities: ['New York', 'London', 'Sydney', 'Toronto', 'Chicago', 'Manchester', 'Melbourne', 'Vancouver'],
    teams: [
      'Northside United',
      'Harbor City FC',
      'Lakeshore Lions',
      'Redwood Rovers',
      'Capital Comets',
      'Bay Hawks',
    ],
    skills: [
      'bake sourdough',
      'fix a leaky tap',
      'learn guitar chords',
      'edit videos on your phone',
      'meal prep for a week',
    ],
    topics: [
      'storm warning for the east coast',
      'election night results',
      'wildfire evacuations expand',
      'rail strike talks resume',
      'record heat across the country',
    ],
    gadgets: [
      'the new foldable phone',
      'a $30 smartwatch',
      'the fastest laptop of 2026',
      'noise-cancelling earbuds',
    ],
    titles: {
      music: [
        '{artist} - {song} (Official Music Video)',
        '{artist} – {song} [Official Lyric Video] {emoji}',
        '{artist} - {song} (Live at {city})',
      ],
      gaming: [
        'I Survived 100 Days in {game} Hardcore {emoji}',
        '{game} World Record Speedrun in {n} Minutes',
        'The NEW {game} Update Changes Everything {emoji}',
      ],
      movies: ['{movie} | Official Trailer', '{movie} – Final Trailer (2026) {emoji}', '{movie} | Teaser'],
      sports: [
        '{team} vs {team2} | Extended Highlights',
        '{team} vs {team2} – Every Goal {emoji}',
        'Last-Minute Winner: {team} Stun {team2}',
      ],
      vlog: [
        'We Tried Every {food} in {city} {emoji}',
        '24 Hours in {city} on $100',
        'Surprising My Best Friend in {city} {emoji}',
      ],
      howto: [
        'How to {skill} in {n} Minutes',
        '{n} Mistakes Everyone Makes: {skill}',
        "Beginner's Guide: {skill} {emoji}",
      ],
      news: ['Breaking: {topic}', '{topic} – What We Know So Far', 'Live: {topic}'],
      tech: ['{gadget}: Hands-On {emoji}', 'I Tested {gadget} for {n} Days', '{gadget} Explained'],
    },
    descriptions: [
      '{title}\n\nSubscribe for more: new videos every week. {hashtags}',
      'Thanks for watching! Filmed in {city}. {hashtags}',
      'Everything you need to know, in one video. Let us know what you think in the comments. {hashtags}',
    ],
    tags: {
      music: ['music', 'official video', 'pop', 'new music 2026'],
      gaming: ['gaming', "let's play", 'speedrun', 'gameplay'],
      movies: ['trailer', 'movie', 'official trailer'],
      sports: ['highlights', 'football', 'goals'],
      vlog: ['vlog', 'food', 'challenge', 'travel'],
      howto: ['how to', 'tutorial', 'diy'],
      news: ['news', 'live', 'breaking news'],
      tech: ['tech', 'review', 'unboxing'],
    },
    channels: {
      gaming: ['PixelPanda', 'RespawnRiley', 'NoScopeNate'],
      movies: ['Harbor Pictures', 'Lumen Studios'],
      sports: ['Pitchside', 'Full Time Show'],
      vlog: ['Sam & Jo', 'Kitchen Kev'],
      howto: ['Fixit Frank', 'Handy Hannah'],
      news: ['Daily Brief News', 'Coastline 7 News'],
      tech: ['Gadget Grove', 'Circuit Chloe'],
    },
  },
  de: {
    artists: [
      'Jürgen Völler',
      'Lena Schäfer',
      'Die Fünf Brüder',
      'Mäx Körner',
      'Söhne der Stadt',
      'Anni Weiß',
      'Björn Strüver',
    ],
    songs: [
      'Über den Wolken',
      'Märchenprinz',
      'Großstadtlichter',
      'Schön kaputt',
      'Träume aus Glas',
      'Nächte in Köln',
      'Grüße vom Mond',
    ],
    movies: ['Die Nacht über Berlin', 'Das Schweigen der Wälder', 'Grüße aus Übersee', 'Der Fährmann'],
    foods: ['Currywurst', 'Döner', 'Brezel', 'Schnitzel', 'Käsespätzle', 'Flammkuchen'],
    cities: ['München', 'Köln', 'Düsseldorf', 'Berlin', 'Nürnberg', 'Lübeck'],
    teams: ['FC Südstadt', 'Borussia Nordhafen', 'SV Grünwald', 'Fortuna Ostheim', 'Eintracht Bärental'],
    skills: [
      'Sauerteigbrot backen',
      'Fahrrad reparieren',
      'Gitarre lernen',
      'Ordnung schaffen',
      'Smartphone-Fotos verbessern',
    ],
    topics: [
      'Unwetterwarnung für Süddeutschland',
      'Bahnstreik: Was Pendler wissen müssen',
      'Hitzewelle erreicht den Norden',
      'Koalition einigt sich auf Haushalt',
    ],
    gadgets: [
      'das neue Falt-Handy',
      'eine Smartwatch für 30 €',
      'der schnellste Laptop 2026',
      'Kopfhörer mit Geräuschunterdrückung',
    ],
    titles: {
      music: [
        '{artist} – {song} (Offizielles Musikvideo)',
        '{artist} – {song} (Lyric Video) {emoji}',
        '{artist} – {song} | Live in {city}',
      ],
      gaming: [
        '100 Tage {game} im Hardcore-Modus überleben {emoji}',
        '{game}: Weltrekord in {n} Minuten',
        'Das neue {game}-Update ändert alles! {emoji}',
      ],
      movies: [
        '{movie} | Offizieller Trailer (Deutsch)',
        '{movie} – Finaler Trailer German {emoji}',
        '{movie} | Teaser (Deutsch)',
      ],
      sports: [
        '{team} – {team2} | Zusammenfassung',
        '{team} gegen {team2}: Alle Tore {emoji}',
        'Last-Minute-Sieg! {team} schlägt {team2}',
      ],
      vlog: [
        'Wir testen jede {food} in {city} {emoji}',
        '24 Stunden in {city} mit nur 50 €',
        'Überraschung für meine beste Freundin in {city} {emoji}',
      ],
      howto: [
        '{skill} – so klappt es in {n} Minuten',
        '{n} typische Fehler: {skill}',
        'Anleitung für Anfänger: {skill} {emoji}',
      ],
      news: ['Eilmeldung: {topic}', '{topic} – was wir bisher wissen', 'Live: {topic}'],
      tech: ['{gadget} im Test {emoji}', '{n} Tage mit {gadget} – mein Fazit', '{gadget} einfach erklärt'],
    },
    descriptions: [
      '{title}\n\nAbonniere für mehr – jede Woche neue Videos. {hashtags}',
      'Danke fürs Zuschauen! Gedreht in {city}. {hashtags}',
      'Alles Wichtige in einem Video. Schreibt uns eure Meinung in die Kommentare! {hashtags}',
    ],
    tags: {
      music: ['musik', 'offizielles musikvideo', 'deutschpop'],
      gaming: ['gaming', 'lets play deutsch', 'zocken'],
      movies: ['trailer', 'film', 'kino'],
      sports: ['fußball', 'zusammenfassung', 'tore'],
      vlog: ['vlog', 'essen', 'challenge'],
      howto: ['anleitung', 'tutorial', 'selber machen'],
      news: ['nachrichten', 'live', 'eilmeldung'],
      tech: ['technik', 'test', 'unboxing'],
    },
    channels: {
      gaming: ['Zockerbude', 'GameMäx', 'Pixelhelden'],
      movies: ['Filmwelt Trailer', 'Kinostarts Deutschland'],
      sports: ['Anpfiff TV', 'Abseits'],
      vlog: ['Lisa & Jöran', 'Küchenkönig'],
      howto: ['Heimwerker Jörg', 'Lisa erklärt'],
      news: ['Tagesblick', 'Nachrichten Süd'],
      tech: ['Technikblick', 'Gerätewerk'],
    },
  },
  fr: {
    artists: [
      'Léa Moreau',
      'Zoé Lefèvre',
      'Théo & Mélodie',
      'Gaëlle Brûlé',
      'Les Éclairs',
      'Noémie Roux',
      'Loïc Ferré',
    ],
    songs: ['Là où tu vas', 'Été indien', 'Mélancolie', 'Ça ira', 'Cœur de pierre', 'Déjà vu', 'Rêverie'],
    movies: ['Les Âmes Perdues', 'Un Été à Marseille', "La Forêt d'Hiver", 'Le Dernier Métro de Lyon'],
    foods: ['croissant', 'crêpe', 'fromage', 'baguette', 'crème brûlée', 'éclair'],
    cities: ['Paris', 'Besançon', 'Montréal', 'Marseille', 'Orléans', 'Québec'],
    teams: ['Olympique Rivière', 'Stade Étoile', 'AS Côte-Verte', 'FC Lumière', 'Racing Bérénice'],
    skills: [
      'réussir une pâte à crêpes',
      'apprendre la guitare',
      'réparer un vélo',
      'ranger sa maison',
      'économiser de l’argent',
    ],
    topics: [
      'alerte canicule dans le Sud',
      'grève : ce qui change lundi',
      'orages violents en Bretagne',
      'la réforme expliquée',
    ],
    gadgets: [
      'le nouveau smartphone pliable',
      'une montre connectée à 30 €',
      "l'ordinateur le plus rapide de 2026",
      'des écouteurs à réduction de bruit',
    ],
    titles: {
      music: [
        '{artist} - {song} (Clip officiel)',
        '{artist} – {song} (Paroles) {emoji}',
        '{artist} - {song} | Live à {city}',
      ],
      gaming: [
        "J'ai survécu 100 jours sur {game} en hardcore {emoji}",
        '{game} : record du monde en {n} minutes',
        'La nouvelle mise à jour de {game} change tout ! {emoji}',
      ],
      movies: [
        '{movie} | Bande-annonce officielle VF',
        '{movie} – Bande-annonce finale {emoji}',
        '{movie} | Teaser VOSTFR',
      ],
      sports: [
        '{team} – {team2} : le résumé du match',
        '{team} contre {team2} : tous les buts {emoji}',
        'Victoire à la dernière minute pour {team} face à {team2}',
      ],
      vlog: [
        'On a goûté tous les {food} de {city} {emoji}',
        '24 heures à {city} avec 50 €',
        'Je surprends ma meilleure amie à {city} {emoji}',
      ],
      howto: [
        'Comment {skill} en {n} minutes',
        '{n} erreurs à éviter : {skill}',
        'Tuto débutant : {skill} {emoji}',
      ],
      news: ['Dernière minute : {topic}', "{topic} : ce que l'on sait", 'En direct : {topic}'],
      tech: [
        '{gadget} : prise en main {emoji}',
        "J'ai testé {gadget} pendant {n} jours",
        '{gadget} expliqué simplement',
      ],
    },
    descriptions: [
      '{title}\n\nAbonne-toi pour une nouvelle vidéo chaque semaine. {hashtags}',
      "Merci d'avoir regardé ! Tourné à {city}. {hashtags}",
      "Tout ce qu'il faut savoir en une vidéo. Dites-nous ce que vous en pensez ! {hashtags}",
    ],
    tags: {
      music: ['musique', 'clip officiel', 'chanson française'],
      gaming: ['jeu vidéo', 'gameplay fr', 'let’s play'],
      movies: ['bande-annonce', 'cinéma', 'film'],
      sports: ['football', 'résumé', 'buts'],
      vlog: ['vlog', 'cuisine', 'défi'],
      howto: ['tuto', 'astuces', 'fait maison'],
      news: ['actualité', 'direct', 'info'],
      tech: ['high-tech', 'test', 'déballage'],
    },
    channels: {
      gaming: ['LeJoueurFou', 'Manette & Café', 'GG Élodie'],
      movies: ['Cinéma Étoile', 'Bandes-Annonces FR'],
      sports: ['Foot Résumés', 'Le Vestiaire'],
      vlog: ['Chez Camille', 'Les Gourmands'],
      howto: ['Bricolo Benoît', 'Astuces de Mélanie'],
      news: ['Info Express', 'Le Journal du Soir'],
      tech: ['Tech Éclair', 'Numérique & Cie'],
    },
  },
  pt: {
    artists: [
      'Ana Conceição',
      'João Brandão',
      'MC Pietrão',
      'Luísa Araújo',
      'Os Irmãos Gonçalves',
      'Thaís Rebouças',
      'Caio Simões',
    ],
    songs: [
      'Saudade de Você',
      'Coração Acelerado',
      'Verão no Rio',
      'Não Vá Embora',
      'Amanhã Talvez',
      'Paixão',
      'Ilusão',
    ],
    movies: ['O Último Farol', 'Cidade Partida', 'Sertão de Fogo', 'Até o Amanhecer'],
    foods: ['pastel', 'coxinha', 'açaí', 'feijoada', 'pão de queijo', 'brigadeiro'],
    cities: ['São Paulo', 'Florianópolis', 'Belém', 'Rio', 'Maceió', 'Goiânia'],
    teams: ['Atlético Paraíso', 'União Guaíba', 'Esporte Clube Jequié', 'Tricolor do Vale', 'Leões da Serra'],
    skills: [
      'fazer pão caseiro',
      'aprender violão',
      'economizar dinheiro',
      'organizar a casa',
      'editar vídeos no celular',
    ],
    topics: [
      'alerta de chuva em São Paulo',
      'reforma tributária explicada',
      'onda de calor no Nordeste',
      'greve dos ônibus',
    ],
    gadgets: [
      'o novo celular dobrável',
      'um smartwatch de R$ 150',
      'o notebook mais rápido de 2026',
      'fones com cancelamento de ruído',
    ],
    titles: {
      music: [
        '{artist} - {song} (Clipe Oficial)',
        '{artist} - {song} (Lyric Video) {emoji}',
        '{artist} - {song} | Ao Vivo em {city}',
      ],
      gaming: [
        'Sobrevivi 100 dias no {game} hardcore {emoji}',
        '{game}: recorde mundial em {n} minutos',
        'A nova atualização do {game} mudou tudo! {emoji}',
      ],
      movies: [
        '{movie} | Trailer Oficial Dublado',
        '{movie} – Trailer Final {emoji}',
        '{movie} | Teaser Legendado',
      ],
      sports: [
        '{team} x {team2} | Melhores Momentos',
        '{team} x {team2}: todos os gols {emoji}',
        'Virada no fim! {team} vence {team2}',
      ],
      vlog: [
        'Provei todos os {food} de {city} {emoji}',
        '24 horas em {city} com R$ 100',
        'Surpreendi minha melhor amiga em {city} {emoji}',
      ],
      howto: [
        'Como {skill} em {n} minutos',
        '{n} erros comuns: {skill}',
        'Guia para iniciantes: {skill} {emoji}',
      ],
      news: ['Urgente: {topic}', '{topic}: o que se sabe até agora', 'Ao vivo: {topic}'],
      tech: ['{gadget}: primeiras impressões {emoji}', 'Usei {gadget} por {n} dias', '{gadget} explicado'],
    },
    descriptions: [
      '{title}\n\nInscreva-se para mais vídeos toda semana. {hashtags}',
      'Obrigado por assistir! Gravado em {city}. {hashtags}',
      'Tudo o que você precisa saber em um só vídeo. Comenta aí o que achou! {hashtags}',
    ],
    tags: {
      music: ['música', 'clipe oficial', 'sertanejo', 'funk'],
      gaming: ['gameplay', 'jogos', 'gamer brasileiro'],
      movies: ['trailer', 'filme', 'cinema'],
      sports: ['futebol', 'melhores momentos', 'gols'],
      vlog: ['vlog', 'comida', 'desafio'],
      howto: ['tutorial', 'dicas', 'faça você mesmo'],
      news: ['notícias', 'ao vivo', 'urgente'],
      tech: ['tecnologia', 'review', 'unboxing'],
    },
    channels: {
      gaming: ['Jogatina BR', 'Mestre dos Games', 'Zé do Controle'],
      movies: ['Cine Trailers BR', 'Estreias da Semana'],
      sports: ['Futebol Total', 'Gol de Placa'],
      vlog: ['Vida de Ana', 'Comilança'],
      howto: ['Faça Você Mesmo', 'Dicas da Júlia'],
      news: ['Jornal da Manhã', 'Notícias Já'],
      tech: ['TecnoBlog BR', 'Canal do Ícaro'],
    },
  },
  hi: {
    artists: [
      'आरव शर्मा',
      'प्रिया कपूर',
      'Ananya Iyer',
      'रोहन मेहता',
      'Kabir Malhotra',
      'ज़ोया ख़ान',
      'Vikram Rao',
    ],
    songs: ['दिल की बातें', 'तेरे बिना', 'Ishq Wala Love', 'बारिश', 'सपनों का शहर', 'Dil Se Dance', 'चाँदनी रात'],
    movies: ['शेरदिल', 'Raat Ka Raja', 'मुसाफ़िर', 'Dhoop Chhaon'],
    foods: ['समोसा', 'बिरयानी', 'गोलगप्पे', 'वड़ा पाव', 'जलेबी', 'dosa'],
    cities: ['मुंबई', 'दिल्ली', 'Bengaluru', 'जयपुर', 'Kolkata', 'लखनऊ'],
    teams: ['भारत', 'Mumbai Mavericks', 'चेन्नई चार्जर्स', 'Delhi Dynamos', 'कोलकाता किंग्स'],
    skills: ['घर पर केक बनाना', 'गिटार सीखना', 'पैसे बचाना', 'फ़ोन से वीडियो एडिट करना'],
    topics: ['मानसून का अलर्ट', 'चुनाव नतीजे', 'बजट 2026 की बड़ी बातें', 'दिल्ली में लू का कहर'],
    gadgets: ['नया फ़ोल्डेबल फ़ोन', '₹2000 वाली स्मार्टवॉच', '2026 का सबसे तेज़ लैपटॉप', 'noise cancelling earbuds'],
    titles: {
      music: [
        '{artist} - {song} (आधिकारिक वीडियो) {emoji}',
        '{song} | {artist} | लिरिकल वीडियो',
        '{artist} - {song} | {city} में लाइव',
      ],
      gaming: [
        '{game} में 100 दिन – हार्डकोर चैलेंज {emoji}',
        '{game} वर्ल्ड रिकॉर्ड सिर्फ़ {n} मिनट में',
        '{game} का नया अपडेट! {emoji}',
      ],
      movies: ['{movie} | आधिकारिक ट्रेलर', '{movie} | Official Trailer (Hindi) {emoji}', '{movie} | टीज़र'],
      sports: [
        '{team} बनाम {team2} | हाइलाइट्स',
        '{team} vs {team2} – आख़िरी ओवर का रोमांच {emoji}',
        '{team} ने {team2} को हराया',
      ],
      vlog: [
        '{city} का हर {food} चखा {emoji}',
        '{city} में 24 घंटे – सिर्फ़ ₹500 में',
        'बेस्ट फ्रेंड को {city} में सरप्राइज़ {emoji}',
      ],
      howto: [
        '{n} मिनट में {skill} कैसे सीखें',
        '{skill}: शुरुआती लोगों के लिए गाइड {emoji}',
        '{skill} – {n} आसान टिप्स',
      ],
      news: ['ताज़ा ख़बर: {topic}', '{topic} – अब तक क्या पता है', 'लाइव: {topic}'],
      tech: ['{gadget} – पहली नज़र {emoji}', '{n} दिन {gadget} के साथ', '{gadget} आसान भाषा में'],
    },
    descriptions: [
      '{title}\n\nऐसे ही वीडियो के लिए सब्सक्राइब करें। {hashtags}',
      'देखने के लिए धन्यवाद! {city} में शूट किया गया। {hashtags}',
      'पूरी जानकारी एक ही वीडियो में। कमेंट में बताइए आपको कैसा लगा! {hashtags}',
    ],
    tags: {
      music: ['गाना', 'hindi song', 'bollywood'],
      gaming: ['gaming', 'गेमिंग', 'live stream'],
      movies: ['ट्रेलर', 'फ़िल्म', 'trailer'],
      sports: ['क्रिकेट', 'highlights', 'मैच'],
      vlog: ['vlog', 'खाना', 'street food'],
      howto: ['tutorial', 'टिप्स', 'कैसे करें'],
      news: ['समाचार', 'लाइव', 'breaking news'],
      tech: ['टेक', 'review', 'unboxing'],
    },
    channels: {
      gaming: ['गेमिंग गुरु', 'Techno Gamerz IN', 'Desi Respawn'],
      movies: ['फ़िल्मी ट्रेलर्स', 'Cinema Adda'],
      sports: ['क्रिकेट अड्डा', 'Sixer Zone'],
      vlog: ['रसोई विद रिया', 'Safar Diaries'],
      howto: ['DIY दोस्त', 'सीखो आसान'],
      news: ['समाचार 24x7', 'Bharat Khabar'],
      tech: ['टेक बाबा', 'Gadget Ghar'],
    },
  },
};
