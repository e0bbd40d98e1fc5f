"""Oracle time-zone region ids (TIMESTAMP WITH TIME ZONE bytes 11-12) and their names.

A TIMESTAMP WITH TIME ZONE value either carries a fixed offset or a region id from Oracle's
time-zone file. The table below is the region list OpenLogReplicator carries (its locales
table), written as ``<hex id>=<name>`` pairs and parsed once at import. Ids OpenLogReplicator
does not know render as ``TZ?``.
"""

from __future__ import annotations

from typing import Final

UNKNOWN_REGION: Final = "TZ?"

# Packed "<id hex>=<region>" pairs; region names never contain spaces.
_REGIONS: Final = """
8004=Etc/GMT 8008=Etc/GMT-14 800c=Etc/GMT-13 8010=Etc/GMT-12 8014=Etc/GMT-11 8018=Etc/GMT-10
801c=Etc/GMT-9 8020=Etc/GMT-8 8024=Etc/GMT-7 8028=Etc/GMT-6 802c=Etc/GMT-5 8030=Etc/GMT-4
8034=Etc/GMT-3 8038=Etc/GMT-2 803c=Etc/GMT-1 8040=Etc/GMT+1 8044=Etc/GMT+2 8048=Etc/GMT+3
804c=Etc/GMT+4 8050=Etc/GMT+5 8054=Etc/GMT+6 8058=Etc/GMT+7 805c=Etc/GMT+8 8060=Etc/GMT+9
8064=Etc/GMT+10 8068=Etc/GMT+11 806c=Etc/GMT+12 8070=Etc/UTC 8074=Etc/UCT 8078=Africa/Algiers
807c=Africa/Luanda 8080=Africa/Porto-Novo 8084=Africa/Gaborone 8088=Africa/Ouagadougou
808c=Africa/Bujumbura 8090=Africa/Douala 8094=Africa/Bangui 8098=Africa/Ndjamena
809c=Africa/Kinshasa 80a0=Africa/Lubumbashi 80a4=Africa/Brazzaville 80a8=Africa/Abidjan
80ac=Africa/Djibouti 80b0=Africa/Cairo 80b4=Africa/Malabo 80b8=Africa/Asmara
80bc=Africa/Addis_Ababa 80c0=Africa/Libreville 80c4=Africa/Banjul 80c8=Africa/Accra
80cc=Africa/Conakry 80d0=Africa/Bissau 80d4=Africa/Nairobi 80d8=Africa/Maseru
80dc=Africa/Monrovia 80e0=Africa/Tripoli 80e4=Africa/Blantyre 80e8=Africa/Bamako
80ec=Antarctica/Vostok 80f0=Africa/Nouakchott 80f4=Africa/Casablanca 80f8=Africa/El_Aaiun
80fc=Africa/Maputo 8100=Africa/Windhoek 8104=Africa/Niamey 8108=Africa/Lagos 810c=Africa/Kigali
8110=Africa/Sao_Tome 8114=Africa/Dakar 8118=Africa/Freetown 811c=Africa/Mogadishu
8120=Africa/Johannesburg 8124=Africa/Khartoum 8128=Africa/Mbabane 812c=Africa/Dar_es_Salaam
8130=Africa/Lome 8134=Africa/Tunis 8138=Africa/Kampala 813c=Africa/Lusaka 8140=Africa/Harare
8144=Africa/Ceuta 8148=Antarctica/Rothera 814c=America/Santarem 8150=Asia/Novokuznetsk
8154=Antarctica/Macquarie 8158=America/Recife 815c=America/Matamoros
8160=America/North_Dakota/Center 8164=America/North_Dakota/New_Salem 8168=America/Bahia
816c=America/Kentucky/Monticello 8170=America/Moncton 8174=America/Ojinaga
8178=America/Indiana/Tell_City 817c=America/Bahia_Banderas 8180=America/Santa_Isabel
8184=America/Argentina/San_Luis 8188=America/Argentina/Rio_Gallegos
818c=America/Argentina/La_Rioja 8190=America/New_York 8194=America/Chicago 8198=America/Denver
819c=America/Los_Angeles 81a0=America/Juneau 81a4=America/Yakutat 81a8=America/Anchorage
81ac=America/Nome 81b0=America/Adak 81b4=America/Phoenix 81b8=America/Boise
81bc=America/Indianapolis 81c0=America/Indiana/Marengo 81c4=America/Indiana/Knox
81c8=America/Indiana/Vevay 81cc=America/Louisville 81d0=America/Detroit 81d4=America/Menominee
81d8=America/St_Johns 81dc=America/Goose_Bay 81e0=America/Halifax 81e4=America/Glace_Bay
81e8=America/Montreal 81ec=America/Thunder_Bay 81f0=America/Nipigon 81f4=America/Rainy_River
81f8=America/Winnipeg 81fc=America/Regina 8200=America/Swift_Current 8204=America/Edmonton
8208=America/Vancouver 820c=America/Dawson_Creek 8210=America/Pangnirtung 8214=America/Iqaluit
8218=America/Rankin_Inlet 821c=America/Cambridge_Bay 8220=America/Yellowknife
8224=America/Inuvik 8228=America/Whitehorse 822c=America/Dawson 8230=America/Cancun
8234=America/Mexico_City 8238=America/Chihuahua 823c=America/Hermosillo 8240=America/Mazatlan
8244=America/Tijuana 8248=America/Anguilla 824c=America/Antigua 8250=America/Nassau
8254=America/Barbados 8258=America/Belize 825c=America/Cayman 8260=America/Costa_Rica
8264=America/Havana 8268=America/Dominica 826c=America/Santo_Domingo 8270=America/El_Salvador
8274=America/Grenada 8278=America/Guadeloupe 827c=America/Guatemala 8280=America/Port-au-Prince
8284=America/Tegucigalpa 8288=America/Jamaica 828c=America/Martinique 8290=America/Montserrat
8294=America/Managua 8298=America/Panama 829c=America/Puerto_Rico 82a0=America/St_Kitts
82a4=America/St_Lucia 82a8=America/Miquelon 82ac=America/St_Vincent 82b0=America/Grand_Turk
82b4=America/Tortola 82b8=America/St_Thomas 82bc=America/Buenos_Aires
82c0=America/Argentina/Ushuaia 82c4=America/Cordoba 82c8=America/Jujuy 82cc=America/Catamarca
82d0=America/Mendoza 82d4=America/Aruba 82d8=America/La_Paz 82dc=America/Noronha
82e0=America/Belem 82e4=America/Fortaleza 82e8=America/Araguaina 82ec=America/Maceio
82f0=America/Sao_Paulo 82f4=America/Cuiaba 82f8=America/Porto_Velho 82fc=America/Boa_Vista
8300=America/Manaus 8304=America/Porto_Acre 8308=America/Santiago 830c=America/Bogota
8310=America/Curacao 8314=America/Guayaquil 8318=America/Cayenne 831c=America/Guyana
8320=America/Asuncion 8324=America/Lima 8328=America/Paramaribo 832c=America/Port_of_Spain
8330=America/Montevideo 8334=America/Caracas 8338=America/Scoresbysund 833c=America/Godthab
8340=America/Thule 8344=America/Indiana/Vincennes 8348=America/Indiana/Petersburg 834c=EST
8350=MST 8354=HST 8358=EST5EDT 835c=CST6CDT 8360=MST7MDT 8364=PST8PDT
8368=America/Indiana/Winamac 836c=America/Resolute 8370=America/Toronto 8374=America/Atikokan
8378=America/Campo_Grande 837c=America/Danmarkshavn 8380=America/Blanc-Sablon
8384=America/Eirunepe 8388=America/Merida 838c=America/Monterrey 8390=America/Argentina/Tucuman
8394=America/Argentina/San_Juan 8398=Antarctica/Casey 839c=Antarctica/Davis
83a0=Antarctica/Mawson 83a4=Antarctica/DumontDUrville 83a8=Antarctica/Syowa
83ac=Antarctica/Palmer 83b0=Antarctica/McMurdo 83b4=America/Argentina/Salta 83b8=Pacific/Chuuk
83bc=Pacific/Pohnpei 83c0=Asia/Kabul 83c4=Asia/Yerevan 83c8=Asia/Baku 83cc=Asia/Bahrain
83d0=Asia/Dacca 83d4=Asia/Thimphu 83d8=Asia/Brunei 83dc=Asia/Rangoon 83e0=Asia/Phnom_Penh
83e4=Asia/Harbin 83e8=Asia/Shanghai 83ec=Asia/Chungking 83f0=Asia/Urumqi 83f4=Asia/Kashgar
83f8=Asia/Hong_Kong 83fc=Asia/Taipei 8400=Asia/Macao 8404=Asia/Nicosia 8408=Asia/Tbilisi
840c=Asia/Dili 8410=Asia/Calcutta 8414=Asia/Jakarta 8418=Asia/Ujung_Pandang 841c=Asia/Jayapura
8420=Asia/Tehran 8424=Asia/Baghdad 8428=Asia/Jerusalem 842c=Asia/Tokyo 8430=Asia/Amman
8434=Asia/Almaty 8438=Asia/Aqtobe 843c=Asia/Aqtau 8440=Asia/Bishkek 8444=Asia/Seoul
8448=Asia/Pyongyang 844c=Asia/Kuwait 8450=Asia/Vientiane 8454=Asia/Beirut 8458=Asia/Kuala_Lumpur
845c=Asia/Kuching 8460=Asia/Hovd 8464=Asia/Ulaanbaatar 8468=Asia/Katmandu 846c=Asia/Muscat
8470=Asia/Karachi 8474=Asia/Gaza 8478=Asia/Manila 847c=Asia/Qatar 8480=Asia/Riyadh
8490=Asia/Singapore 8494=Asia/Colombo 8498=Asia/Damascus 849c=Asia/Dushanbe 84a0=Asia/Bangkok
84a4=Asia/Ashgabat 84a8=Asia/Dubai 84ac=Asia/Samarkand 84b0=Asia/Tashkent 84b4=Asia/Saigon
84b8=Asia/Aden 84bc=Asia/Yekaterinburg 84c0=Asia/Omsk 84c4=Asia/Novosibirsk
84c8=Asia/Krasnoyarsk 84cc=Asia/Irkutsk 84d0=Asia/Yakutsk 84d4=Asia/Vladivostok
84d8=Asia/Magadan 84dc=Asia/Kamchatka 84e0=Asia/Anadyr 84e4=Asia/Pontianak 84e8=Asia/Qyzylorda
84ec=Asia/Oral 84f0=Asia/Choibalsan 84f4=Asia/Sakhalin 84f8=America/Sitka
84fc=America/Metlakatla 8500=America/North_Dakota/Beulah 8504=Africa/Juba
8508=America/Lower_Princes 850c=America/Kralendijk 8510=Asia/Hebron 8514=America/Creston
8518=Asia/Khandyga 851c=Asia/Ust-Nera 8520=Europe/Busingen 8524=Antarctica/Troll
8528=Atlantic/Bermuda 852c=Atlantic/Stanley 8530=Atlantic/South_Georgia 8534=Atlantic/Faroe
8538=Atlantic/Reykjavik 853c=Asia/Chita 8540=Atlantic/Azores 8544=Atlantic/Madeira
8548=Atlantic/Canary 854c=Atlantic/Cape_Verde 8550=Atlantic/St_Helena 8554=Asia/Srednekolymsk
8558=Pacific/Bougainville 855c=America/Fort_Nelson 8560=Europe/Astrakhan 8564=Australia/Darwin
8568=Australia/Perth 856c=Australia/Brisbane 8570=Australia/Lindeman 8574=Australia/Adelaide
8578=Australia/Hobart 857c=Australia/Melbourne 8580=Australia/Sydney 8584=Australia/Broken_Hill
8588=Australia/Lord_Howe 858c=Australia/Currie 8590=Australia/Eucla 8594=Europe/Kirov
8598=Europe/Ulyanovsk 859c=Asia/Barnaul 85a0=Asia/Tomsk 85a4=Asia/Yangon 85a8=Asia/Famagusta
85ac=Asia/Atyrau 85b0=Europe/Saratov 85b4=WET 85b8=CET 85bc=MET 85c0=EET 85c4=Europe/London
85c8=Europe/Belfast 85cc=Europe/Dublin 85d0=Europe/Tirane 85d4=Europe/Andorra 85d8=Europe/Vienna
85dc=Europe/Minsk 85e0=Europe/Brussels 85e4=Europe/Sofia 85e8=Europe/Prague
85ec=Europe/Copenhagen 85f0=Europe/Tallinn 85f4=Europe/Helsinki 85f8=Europe/Paris
85fc=Europe/Berlin 8600=Europe/Gibraltar 8604=Europe/Athens 8608=Europe/Budapest
860c=Europe/Rome 8610=Europe/Riga 8614=Europe/Vaduz 8618=Europe/Vilnius 861c=Europe/Luxembourg
8620=Europe/Malta 8624=Europe/Chisinau 8628=America/Punta_Arenas 862c=Europe/Monaco
8630=Europe/Amsterdam 8634=Europe/Oslo 8638=Europe/Warsaw 863c=Europe/Lisbon
8640=Europe/Bucharest 8644=Europe/Kaliningrad 8648=Europe/Moscow 864c=Europe/Samara
8650=Europe/Madrid 8654=Europe/Stockholm 8658=Europe/Zurich 865c=Europe/Istanbul
8660=Europe/Kiev 8664=Europe/Uzhgorod 8668=Europe/Zaporozhye 866c=Europe/Simferopol
8670=Europe/Belgrade 8674=Europe/Volgograd 86cc=Indian/Kerguelen 86d0=Indian/Chagos
86d4=Indian/Maldives 86d8=Indian/Antananarivo 86dc=Indian/Christmas 86e0=Indian/Cocos
86e4=Indian/Comoro 86e8=Indian/Mahe 86ec=Indian/Mauritius 86f0=Indian/Mayotte
86f4=Indian/Reunion 8708=Pacific/Honolulu 870c=Pacific/Easter 8710=Pacific/Galapagos
8714=Pacific/Rarotonga 8718=Pacific/Fiji 871c=Pacific/Gambier 8720=Pacific/Marquesas
8724=Pacific/Tahiti 8728=Pacific/Guam 872c=Pacific/Tarawa 8730=Pacific/Enderbury
8734=Pacific/Kiritimati 8738=Pacific/Saipan 873c=Pacific/Majuro 8740=Pacific/Kwajalein
8748=Pacific/Truk 874c=Pacific/Ponape 8750=Pacific/Kosrae 8754=Pacific/Nauru 8758=Pacific/Noumea
875c=Pacific/Auckland 8760=Pacific/Chatham 8764=Pacific/Niue 8768=Pacific/Norfolk
876c=Pacific/Palau 8770=Pacific/Port_Moresby 8774=Pacific/Pitcairn 8778=Pacific/Pago_Pago
877c=Pacific/Apia 8784=Pacific/Guadalcanal 8788=Pacific/Fakaofo 878c=Pacific/Tongatapu
8790=Pacific/Funafuti 8794=Pacific/Johnston 8798=Pacific/Midway 879c=Pacific/Wake
87a0=Pacific/Efate 87a4=Pacific/Wallis 8804=GMT 8870=Etc/Universal 8874=UCT 88b0=Egypt
88b8=Africa/Asmera 88e0=Libya 88e8=Africa/Timbuktu 8990=US/Eastern 8994=US/Central 8998=Navajo
899c=US/Pacific 89a8=US/Alaska 89b0=America/Atka 89b4=US/Arizona 89bc=America/Fort_Wayne
89c4=America/Knox_IN 89cc=America/Kentucky/Louisville 89d0=US/Michigan 89d8=Canada/Newfoundland
89e0=Canada/Atlantic 89e8=Canada/Eastern 89f8=Canada/Central 89fc=Canada/East-Saskatchewan
8a04=Canada/Mountain 8a08=Canada/Pacific 8a28=Canada/Yukon 8a34=Mexico/General
8a40=Mexico/BajaSur 8a44=America/Ensenada 8a64=Cuba 8a78=America/Marigot 8a88=Jamaica
8ab8=America/Virgin 8abc=America/Argentina/Buenos_Aires 8ac4=America/Argentina/Cordoba
8ac8=America/Argentina/Jujuy 8acc=America/Argentina/Catamarca 8ad0=America/Argentina/Mendoza
8adc=Brazil/DeNoronha 8af0=Brazil/East 8b00=Brazil/West 8b04=Brazil/Acre 8b08=Chile/Continental
8b74=America/Coral_Harbour 8bb0=Antarctica/South_Pole 8bd0=Asia/Dhaka 8bd4=Asia/Thimbu 8be8=PRC
8bec=Asia/Chongqing 8bf8=Hongkong 8bfc=ROC 8c00=Asia/Macau 8c04=Europe/Nicosia 8c10=Asia/Kolkata
8c18=Asia/Makassar 8c20=Iran 8c28=Asia/Tel_Aviv 8c2c=Japan 8c44=ROK 8c64=Asia/Ulan_Bator
8c74=Asia/Kathmandu 8c90=Singapore 8ca4=Asia/Ashkhabad 8cb4=Asia/Ho_Chi_Minh
8d34=Atlantic/Faeroe 8d38=Iceland 8d64=Australia/North 8d68=Australia/West
8d6c=Australia/Queensland 8d74=Australia/South 8d78=Australia/Tasmania 8d7c=Australia/Victoria
8d80=Australia/ACT 8d84=Australia/Yancowinna 8d88=Australia/LHI 8dc4=GB 8dcc=Eire
8de8=Europe/Bratislava 8df4=Europe/Mariehamn 8e0c=Europe/Vatican 8e24=Europe/Tiraspol
8e34=Arctic/Longyearbyen 8e38=Poland 8e3c=Portugal 8e48=W-SU 8e5c=Turkey 8e70=Europe/Ljubljana
8f08=US/Hawaii 8f0c=Chile/EasterIsland 8f40=Kwajalein 8f48=Pacific/Yap 8f5c=NZ 8f60=NZ-CHAT
8f78=US/Samoa 9004=Etc/GMT+0 9070=Universal 9198=US/Mountain 91b0=US/Aleutian
91bc=US/East-Indiana 91c4=US/Indiana-Starke 91fc=Canada/Saskatchewan 9244=Mexico/BajaNorte
9278=America/St_Barthelemy 92c4=America/Rosario 92cc=America/Argentina/ComodRivadavia
9304=America/Rio_Branco 9428=Israel 9580=Australia/Canberra 95c4=GB-Eire 960c=Europe/San_Marino
9634=Atlantic/Jan_Mayen 965c=Asia/Istanbul 9670=Europe/Sarajevo 9778=Pacific/Samoa 9804=GMT+0
9870=Etc/Zulu 9994=CST 9998=America/Shiprock 999c=US/Pacific-New
99bc=America/Indiana/Indianapolis 9d80=Australia/NSW 9dc4=Europe/Jersey 9e70=Europe/Skopje
a004=Etc/GMT-0 a070=Zulu a19c=PST a5c4=Europe/Guernsey a670=Europe/Zagreb a804=GMT-0
adc4=Europe/Isle_of_Man ae70=Europe/Podgorica b004=Etc/GMT0 b804=GMT0 c004=Etc/Greenwich
c804=Greenwich d004=UTC
"""

REGION_NAMES: Final[dict[int, str]] = {
    int(key, 16): name for key, name in (item.split("=", 1) for item in _REGIONS.split())
}


def region_name(region_id: int) -> str:
    """Return the region name for a 16-bit region id (top bit set), or ``TZ?``."""
    return REGION_NAMES.get(region_id, UNKNOWN_REGION)


def zone_text(b11: int, b12: int) -> str:
    """Render the zone part of a TIMESTAMP WITH TIME ZONE value (its bytes 11 and 12).

    Bytes 5..36 hold a fixed offset (hours + 20, minutes + 60), printed ``±HH:MM``; any
    other value is a region id looked up in :data:`REGION_NAMES`.
    """
    if 5 <= b11 <= 36:
        negative = b11 < 20 or (b11 == 20 and b12 < 60)
        return f"{'-' if negative else '+'}{abs(b11 - 20):02d}:{abs(b12 - 60):02d}"
    return REGION_NAMES.get((b11 << 8) | b12, UNKNOWN_REGION)
